import { describe, expect, it } from 'vitest';
import { definitionText, versionToSave } from '../../../engine/definition/same-definition.js';
import type { WorkflowDefinition } from '../../../engine/definition/types.js';

const definition: WorkflowDefinition = { name: 'wf', steps: [{ name: 'a' }, { name: 'b', depends: ['a'] }] };

describe('Rules: registering a definition', () => {
  it('makes version 1 of a workflow not registered yet', () => {
    expect(versionToSave(undefined, definitionText(definition))).toEqual({ version: 1, created: true });
  });

  it('keeps the latest version for an identical definition', () => {
    const text = definitionText(definition);
    expect(versionToSave({ version: 4, text }, definitionText(structuredClone(definition)))).toEqual({
      version: 4,
      created: false,
    });
  });

  it('makes the next version for a different definition', () => {
    const changed = { ...definition, description: 'now described' };
    expect(versionToSave({ version: 4, text: definitionText(definition) }, definitionText(changed))).toEqual({
      version: 5,
      created: true,
    });
  });
});
