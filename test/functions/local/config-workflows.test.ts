import { describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../engine/index.js';
import { SqliteStore } from '../../../functions/adapters/sqlite/store.js';
import { registerConfigWorkflows } from '../../../functions/local/config-workflows.js';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { SimulatedWorld, workflowsFrom } from '../../support/simulated-world.js';

const greet = (stepName: string) =>
  workflowsFrom(
    `workflows:\n  - name: greet\n    steps:\n      - name: ${stepName}\n`,
  )[0] as WorkflowDefinition;

/**
 * A database serve wrote before it remembered its files' definitions: nothing is remembered, so
 * a file whose definition is one of the versions counts as unchanged (it was registered before).
 */
describe('serve --config on a database that remembers no file definitions', () => {
  async function olderDatabase() {
    const telemetry = recordingTelemetry();
    const store = SqliteStore.open(':memory:');
    const world = new SimulatedWorld(store, telemetry);
    // As an older serve registered the file, and a PUT then made version 2.
    await world.manager.registerWorkflow(greet('from-file'));
    await world.manager.registerWorkflow(greet('from-put'));
    const register = (stepName: string) =>
      registerConfigWorkflows([greet(stepName)], { manager: world.manager, store, logger: telemetry.logger });
    const latest = async () => (await store.getWorkflow('greet'))?.definition.steps.map((step) => step.name);
    return { store, telemetry, register, latest };
  }

  it('keeps the latest version when the file gives an earlier one, and from then on remembers it', async () => {
    const { store, register, latest } = await olderDatabase();
    await register('from-file');
    expect(await latest()).toEqual(['from-put']);
    expect((await store.getWorkflow('greet'))?.version).toBe(2);
    expect(await store.configDefinition('greet')).toContain('from-file');
  });

  it('registers a definition no version has, as the next version, with no warning', async () => {
    const { store, telemetry, register, latest } = await olderDatabase();
    await register('new');
    expect(await latest()).toEqual(['new']);
    expect((await store.getWorkflow('greet'))?.version).toBe(3);
    expect(telemetry.logs.filter((log) => log.level === 'warn')).toEqual([]);
  });
});
