import type { WorkflowDefinition } from './types.js';

/**
 * The text a definition is stored and compared as. Definitions arrive normalised, so the same
 * definition always serialises to the same text.
 */
export function definitionText(definition: WorkflowDefinition): string {
  return JSON.stringify(definition);
}

/**
 * Registering a definition: an identical one keeps the latest version (`created: false`), a
 * different one makes the next (the first is version 1).
 */
export function versionToSave(
  latest: { version: number; text: string } | undefined,
  text: string,
): { version: number; created: boolean } {
  if (latest?.text === text) return { version: latest.version, created: false };
  return { version: (latest?.version ?? 0) + 1, created: true };
}
