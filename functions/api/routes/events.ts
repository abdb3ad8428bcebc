import { HISTORY_KINDS, type HistoryKind } from '../../../engine/index.js';
import { ApiError } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { JobId, Text, WorkflowName } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';

const eventsQuery = {
  job: { schema: JobId, description: "Only this job's events.", emptyIsAbsent: true },
  workflow: { schema: WorkflowName, description: "Only this workflow's jobs' events.", emptyIsAbsent: true },
  kinds: {
    schema: Text,
    description: 'Only these kinds, comma-separated (`job.completed,step.waiting`).',
    emptyIsAbsent: true,
  },
} as const satisfies ParameterSpecs;

const KNOWN_KINDS: ReadonlySet<string> = new Set(HISTORY_KINDS);

function kindsOf(list: string | undefined): ReadonlySet<HistoryKind> | undefined {
  if (list === undefined) return undefined;
  const kinds = list.split(',').map((kind) => kind.trim());
  const unknown = kinds.filter((kind) => !KNOWN_KINDS.has(kind));
  if (unknown.length)
    throw new ApiError(
      'bad_request',
      `kinds: ${unknown.map((kind) => JSON.stringify(kind)).join(', ')} is not a history kind (${HISTORY_KINDS.join(', ')})`,
    );
  return new Set(kinds as HistoryKind[]);
}

async function streamEvents(
  request: CheckedRequest<NoParameters, typeof eventsQuery, NoParameters>,
  deps: ApiDeps,
) {
  const kinds = kindsOf(request.query.kinds);
  if (!deps.events)
    throw new ApiError(
      'not_implemented',
      'the deployed API cannot stream: follow jobs with the EventBridge events (docs/deploying.md) or GET /api/job/{id}?wait=',
    );
  const headers = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  };
  if (request.method.toUpperCase() === 'HEAD') return { status: 200, headers, body: '' };
  const job = request.query.job?.toLowerCase();
  const stream = deps.events.open(
    { namespace: request.namespace, job, workflow: request.query.workflow, kinds },
    request.headers['last-event-id'],
  );
  return {
    status: 200,
    headers,
    body: '',
    stream,
  };
}

export const eventRoutes = [
  route({
    method: 'GET',
    path: '/api/events',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "Server-Sent Events: each history entry this serve commits in the namespace's jobs",
    description:
      'docs/api.md, "Live events". Serve only: deployed it answers 501 (EventBridge and `GET /api/job/{id}?wait=` instead).',
    query: eventsQuery,
    headers: {
      'Last-Event-ID': {
        schema: Text,
        description: 'Resume after this event (kept for the last 10,000); older, an `event: reset` first.',
      },
    },
    responses: {
      200: {
        description:
          'An endless `text/event-stream`: `id:` the cursor, `event:` the kind, `data:` the entry as JSON.',
        contentType: 'text/event-stream',
      },
      400: refusal('A kind that is not one.'),
      429: refusal('Serve holds its most streams.'),
      501: refusal('Deployed: the API cannot stream.'),
    },
    handle: streamEvents,
  }),
];
