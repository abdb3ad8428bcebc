// What code outside the engine uses of it. Anything else is the engine's own business: add a name
// here when a caller needs it, rather than importing a file inside engine/.

// Workflow definitions: loading and compiling them, with their durations and fan-out tasks.
export {
  type CompiledWorkflow,
  compileWorkflow,
  type FanOutTask,
  graphOf,
  type StepNode,
} from './definition/compile.js';
export { parseDuration } from './definition/duration.js';
export { loadWorkflows } from './definition/load.js';
export { formatDefinitionError, type StepDefinition, type WorkflowDefinition } from './definition/types.js';

// Jobs: their records, the events applied to them, the transitions that result, fan-out's children.
export { applyEvent, createJob } from './job/apply.js';
export { DEFAULT_MAX_FAN_OUT, type EngineContext, type JobEvent } from './job/events.js';
export { isElementId } from './job/fan-out.js';
export { ChildGatherer, gatherChildren } from './job/gather.js';
export type { Rejection, Transition, TransitionNote } from './job/transition.js';
export {
  type FanCounts,
  type FollowUp,
  findStep,
  isFinished,
  isUuid,
  type JobRecord,
  type JobStatus,
  parseCorrelationId,
  type StepRequest,
  type StepState,
  type Timer,
  type TimerKey,
  timerId,
} from './job/types.js';
export { derivedChildId } from './job/uuid-v5.js';

// JSON values.
export {
  copyWithout,
  isJsonObject,
  type Json,
  type JsonObject,
  mergeFirstWins,
  parseJsonObjectBody,
} from './json.js';

// Ports: what the engine needs of a bus, a store and timers.
export { type Bus, type InboundReply, UndeliverableError } from './ports/bus.js';
export { type Commit, InvalidCursorError, type OutboxEntry, type Store } from './ports/store.js';
export type { TimerScheduler } from './ports/timers.js';
