// The engine's one entrance: code outside engine/ imports it from here and nowhere else
// (test/architecture/layers.test.ts fails on a deeper import; tests of one rule may import its file).
// A name not listed is the engine's own business.

// Scoped tokens: roles, what each may do, and a principal as an API authorizer passes it on.
export { contextOfPrincipal, principalOfContext } from './access/principal-context.js';
export {
  mayGrant,
  type Principal,
  ROLES,
  ROOT,
  type Role,
  roleAllows,
  seesNamespace,
  tokenHash,
  tokenIdOf,
  tokenScopeProblem,
} from './access/roles.js';
// Workflow definitions: loading, validating and compiling them; namespaces and queue names.
export {
  type CompiledWorkflow,
  compileWorkflow,
  type FanOutTask,
  graphOf,
  type StepNode,
} from './definition/compile.js';
export { parseDuration } from './definition/duration.js';
export { type LoadOptions, loadWorkflows } from './definition/load.js';
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
  withQueuePrefix,
} from './definition/namespace.js';
export {
  defaultNamespaceSettings,
  type NamespaceSettings,
  namespaceRuleProblems,
  namespaceSettingsProblems,
  vhostProblem,
} from './definition/namespace-settings.js';
export {
  MAX_AMQP_NAME_BYTES,
  reservedQueueProblem,
  sentQueueOf,
  stepQueueProblem,
} from './definition/queue-name.js';
export { definitionText, versionToSave } from './definition/same-definition.js';
export {
  type DefinitionError,
  formatDefinitionError,
  type ScheduleDefinition,
  type StepDefinition,
  type TaskDefinition,
  type WorkflowDefinition,
} from './definition/types.js';
export type { LoadResult } from './definition/validate.js';
// Expressions (CEL): compiled once per definition version.
export { compileExpression } from './expressions/compile.js';
export type { ExpressionVariables } from './expressions/expression.js';
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
  changeAllowed,
  countAfter,
  freeSlots,
  type LimitChange,
  type RunningCount,
  type RunningLimit,
  zeroRunningCount,
} from './job/running-limit.js';
export type { ChildOutcome, FanInit, Rejection, Transition, TransitionNote } from './job/transition.js';
export {
  ACTIVE_JOB_STATUSES,
  type AttemptOutcome,
  type AttemptRecord,
  type CallLink,
  type FanCounts,
  FINISHED_JOB_STATUSES,
  type FollowUp,
  findStep,
  heldByOtherJobs,
  isFinished,
  isOtherJob,
  isSettled,
  isUuid,
  JOB_FORMAT_VERSION,
  JOB_STATUSES,
  JobFormatError,
  type JobJson,
  type JobRecord,
  type JobStatus,
  jobFromJson,
  parseCorrelationId,
  type StepRequest,
  type StepState,
  type StepStatus,
  type Timer,
  type TimerChange,
  type TimerKey,
  type TimerKind,
  timerId,
  zeroJobCounts,
} from './job/types.js';
export { derivedChildId } from './job/uuid-v5.js';
// JSON values.
export {
  copyWithout,
  describeJsonType,
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
  DEFAULT_REPLY_QUEUE,
  type InboundReply,
  type QueueHealth,
  RetryableSendError,
  type SendOptions,
  UndeliverableError,
} from './ports/bus.js';
export {
  type ChildrenPage,
  type Commit,
  type CommitResult,
  type Housekeeping,
  InvalidCursorError,
  type JobPage,
  type JobQueries,
  type JobQuery,
  type JobReader,
  type JobStore,
  type ManagerKeys,
  type NamespaceSettingsStore,
  type OutboxEntry,
  type OutboxPage,
  type QueuedJob,
  type Store,
  type StoredToken,
  type StoredWorkflow,
  StoreUnavailableError,
  type TokenStore,
  type WorkflowRegistry,
  type WorkflowSummary,
} from './ports/store.js';
export type { TimerScheduler } from './ports/timers.js';
// Cron schedules: their ticks, and each tick's job id.
export { DEFAULT_TIMEZONE } from './schedule/cron.js';
export { scheduleKey, tickJobId } from './schedule/identity.js';
export { dueTicks, nextTick, nextTicks } from './schedule/ticks.js';
