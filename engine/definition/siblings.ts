import type { StepDefinition } from './types.js';

/** The other steps with the same `depends` (in any order): an `otherwise:` step's siblings. */
export function siblingsOf(step: StepDefinition, steps: readonly StepDefinition[]): StepDefinition[] {
  const own = new Set(step.depends ?? []);
  return steps.filter(
    (other) =>
      other !== step &&
      (other.depends ?? []).length === own.size &&
      (other.depends ?? []).every((name) => own.has(name)),
  );
}
