// The engine's one entrance: code outside engine/ imports it from here and nowhere else
// (test/architecture/layers.test.ts fails on a deeper import; tests of one rule may import its file).
// A name not listed is the engine's own business.

// Scoped tokens: roles, what each may do, and a principal as an API authorizer passes it on.
export { actorOf } from './access/actor.js';
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
} from './access/roles.js';
// Workflow definitions: loading, validating and compiling them; namespaces and queue names.
export {
  type CompiledWorkflow,
  compileWorkflow,
  type FanOutTask,
  graphOf,
  type StepNode,
} from './definition/compile.js';
export { formatDuration, parseDuration } from './definition/duration.js';
export { type LoadOptions, loadWorkflows } from './definition/load.js';
export { MAX_NAMESPACE_LENGTH, NAME_PATTERN, NAME_RULE } from './definition/names.js';
export {
  ANY_NAMESPACE,
  DEFAULT_NAMESPACE,
  definitionInNamespace,
  definitionShown,
  InvalidNameError,
  inNamespace,
  namespaceOf,
  namespaceProblem,
  QUEUE_PREFIX_PATTERN,
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
  MAX_NOTIFY_TARGETS,
  type NotifyTarget,
  readNotify,
  urlProblem,
} from './definition/notify.js';
export {
  MAX_AMQP_NAME_BYTES,
  type QueueNameRule,
  reservedQueueProblem,
  stepQueueProblem,
} from './definition/queue-name.js';
export { definitionText, versionToSave } from './definition/same-definition.js';
export {
  ATTRIBUTE_NAME,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_SEARCH_ATTRIBUTES,
} from './definition/search-attributes.js';
export {
  SECRET_NAME,
  type SecretRef,
  secretProblems,
  secretRefsOf,
  withSecretValues,
} from './definition/secrets.js';
export { type StepKind, sentQueueOf, stepKindOf } from './definition/step-kind.js';
export {
  type DefinitionError,
  formatDefinitionError,
  type ScheduleDefinition,
  type StepDefinition,
  type TaskDefinition,
  type WorkflowDefinition,
} from './definition/types.js';
export type { LoadResult } from './definition/validate.js';
// A switch over a union ends in `unhandled`: a new variant without its case fails tsc.
export { unhandled } from './exhaustive.js';
// Expressions (CEL): compiled once per definition version.
export { compileExpression } from './expressions/compile.js';
export type { ExpressionVariables } from './expressions/expression.js';
// Jobs: their records, the events applied to them, the transitions that result, fan-out's children.
export { applyEvent, createJob } from './job/apply.js';
export { awaitedRequest } from './job/awaited-request.js';
export { STARTED_MEANWHILE } from './job/call-path-signals.js';
export { type SlotLimits, slotIndexesFrom, slotStarts, slotTurn } from './job/concurrency-slots.js';
export {
  bufferRefusal,
  MAX_BUFFERED_SIGNAL_BYTES,
  MAX_BUFFERED_SIGNALS,
  type SignalFate,
  type SignalTarget,
  signalFate,
} from './job/early-signals.js';
export {
  DEFAULT_FAN_OUT_SLICE,
  DEFAULT_MAX_FAN_OUT,
  type EngineContext,
  type JobEvent,
} from './job/events.js';
// Rules the manager and the stores carry out: fan-in, concurrency slots, resuming children, reply
// bodies, and when a definition is new.
export {
  afterChildrenFinished,
  type ChildFinished,
  followUpNotNeeded,
  readyToFanIn,
} from './job/fan-in.js';
export { ChildGatherer, type GatheredChild, gatherChildren } from './job/gather.js';
export {
  type Actor,
  appendHistory,
  HISTORY_KINDS,
  type HistoryEntry,
  type HistoryKind,
  historyPage,
  MAX_HISTORY_ENTRIES,
  MAX_WORKER_NAME,
  workerName,
} from './job/history.js';
export {
  actsOnRoot,
  callFinishedEvent,
  childCommand,
  failedChildEntry,
  fanOutOpen,
  followParentEvent,
  isSameStart,
  mayStartJob,
} from './job/job-commands.js';
export { type JobRecordText, jobRecordText } from './job/job-json.js';
export { matchesJobQuery } from './job/job-query-match.js';
export {
  ACTIVE_LISTED_STATUSES,
  isListedStatus,
  LISTED_STATUSES,
  type ListedStatus,
  listedStatusOf,
  storedStatusesOf,
  zeroListedCounts,
} from './job/listed-status.js';
export {
  deliveriesOf,
  MAX_NOTIFIED_RESULT_BYTES,
  type NewDelivery,
  type NotificationBody,
} from './job/notifications.js';
export { requestStillOpen } from './job/open-request.js';
export { PersistentList } from './job/persistent-list.js';
export { DEFAULT_MAX_REPLY_BYTES, MAX_SUSPEND_NOTE, type ReplyEvent, replyEvent } from './job/reply-body.js';
export { resetOnResume, resumeFanOut } from './job/resume-children.js';
export {
  type CounterTest,
  changeAllowed,
  countAfter,
  counterTestHolds,
  freeSlots,
  type LimitChange,
  type LimitCondition,
  type LimitEffect,
  limitCondition,
  limitEffect,
  type RunningCount,
  type RunningLimit,
  zeroRunningCount,
} from './job/running-limit.js';
export { searchAttributesOf } from './job/search-attributes.js';
export {
  type HopTarget,
  hopTarget,
  MAX_STEP_PATH_HOPS,
  parseStepPath,
  type StepPath,
  type StepPathHop,
} from './job/step-path.js';
export type { ChildOutcome, FanInit, Rejection, Transition, TransitionNote } from './job/transition.js';
export {
  DEFAULT_MAX_TREE_JOBS,
  type RootState,
  rootStatusesOf,
  type TreeChange,
  type TreeState,
  treeChangeAllowed,
  treeRootOf,
} from './job/tree-quota.js';
export {
  ACTIVE_JOB_STATUSES,
  type AttemptOutcome,
  type AttemptRecord,
  type CallLink,
  correlationIdOf,
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
  type PendingSignal,
  parseCorrelationId,
  STEP_STATUSES,
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
export { type SignalWait, signalStepsOf, signalWaits } from './job/waits.js';
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
export {
  AUDIT_ACTIONS,
  AUDIT_RETENTION_MS,
  type AuditAction,
  type AuditEntry,
  type AuditLog,
  type AuditPage,
  auditIdOf,
} from './ports/audit-log.js';
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
  DELIVERY_RETENTION_MS,
  DELIVERY_STATES,
  type Delivery,
  type DeliveryLog,
  type DeliveryPage,
  type DeliveryQuery,
  type DeliveryState,
  deliveryPageKey,
  newDeliveryRecord,
} from './ports/deliveries.js';
export type { EveryField } from './ports/every-field.js';
export {
  type DeadLetterHandlers,
  type DeadLetterIntake,
  type HeldReplyNote,
  heldReplyNote,
  type RepliesInHand,
  type ReplyConsumption,
  type ReplyDeaths,
  type ReplyDelivery,
  type ReplyHandler,
  type ReplyIntake,
  type ReplyIntakeOptions,
  type ReplyOutcome,
} from './ports/reply-intake.js';
export type { SecretResolver } from './ports/secrets.js';
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
