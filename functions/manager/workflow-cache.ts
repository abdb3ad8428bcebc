import { type CompiledWorkflow, compileWorkflow, type WorkflowRegistry } from '../../engine/index.js';

/** Compiled workflow versions. Versions never change once stored, so they are cached for good. */
export class WorkflowCache {
  private readonly compiled = new Map<string, Promise<CompiledWorkflow | undefined>>();

  constructor(private readonly registry: Pick<WorkflowRegistry, 'getWorkflow'>) {}

  get(name: string, version: number): Promise<CompiledWorkflow | undefined> {
    const key = `${name}@${version}`;
    let found = this.compiled.get(key);
    if (!found) {
      found = this.registry
        .getWorkflow(name, version)
        .then((stored) => stored && compileWorkflow(stored.definition, version));
      found.then((workflow) => workflow ?? this.compiled.delete(key)).catch(() => this.compiled.delete(key));
      this.compiled.set(key, found);
    }
    return found;
  }
}
