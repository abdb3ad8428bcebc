// The engine's public face: what code outside it uses. A name not listed is the engine's own business
// (tests of one rule import that rule's file).

// Scoped tokens: roles and what each may do.
export { type Principal, ROLES, ROOT, type Role } from './access/roles.js';
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
export {
  ANY_NAMESPACE,
  DEFAULT_NAMESPACE,
  definitionInNamespace,
  definitionShown,
  inNamespace,
  namespaceOf,
  namespaceProblem,
  qualifiedName,
  queuePrefixProblem,
  resolveInCallerNamespace,
  splitQualifiedName,
} from './definition/namespace.js';
export { definitionText, versionToSave } from './definition/same-definition.js';
export { formatDefinitionError, type StepDefinition, type WorkflowDefinition } from './definition/types.js';
// Jobs: their records, the events applied to them, the transitions that result, fan-out's children.
export { applyEvent, createJob } from './job/apply.js';
export { awaitedRequest } from './job/awaited-request.js';
export { type SlotLimits, slotIndexesFrom, slotStarts, slotTurn } from './job/concurrency-slots.js';
export { DEFAULT_MAX_FAN_OUT, type EngineContext, type JobEvent } from './job/events.js';
// Rules the manager and the stores carry out: fan-in, concurrency slots, resuming children, reply
// bodies, and when a definition is new.
export {
  afterChildrenFinished,
  type ChildFinished,
  everyChildCompleted,
  followUpNotNeeded,
} from './job/fan-in.js';
export { ChildGatherer, type GatheredChild, gatherChildren } from './job/gather.js';
export { PersistentList } from './job/persistent-list.js';
export { DEFAULT_MAX_REPLY_BYTES, type ReplyEvent, replyEvent } from './job/reply-body.js';
export { resetOnResume, resumeFanOut } from './job/resume-children.js';
export {
  freeSlots,
  type LimitChange,
  type RunningCount,
  type RunningLimit,
  zeroRunningCount,
} from './job/running-limit.js';
export type { Rejection, Transition, TransitionNote } from './job/transition.js';
export {
  ACTIVE_JOB_STATUSES,
  type AttemptOutcome,
  type AttemptRecord,
  type CallLink,
  type FanCounts,
  FINISHED_JOB_STATUSES,
  type FollowUp,
  findStep,
  isFinished,
  isOtherJob,
  isSettled,
  isUuid,
  JOB_STATUSES,
  type JobJson,
  type JobRecord,
  type JobStatus,
  jobFromJson,
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
  jsonEqual,
  mergeFirstWins,
  parseJsonObjectBody,
} from './json.js';
export { MAX_JSON_DEPTH } from './json-depth.js';

// Ports: what the engine needs of a bus, a store and timers.
export {
  type Bus,
  type InboundReply,
  type QueueHealth,
  RetryableSendError,
  type SendOptions,
  UndeliverableError,
} from './ports/bus.js';
export { type Commit, InvalidCursorError, type OutboxEntry, type Store } from './ports/store.js';
export type { TimerScheduler } from './ports/timers.js';
