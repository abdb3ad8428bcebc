import { JOB_STATUSES } from '../../engine/index.js';

/** The OpenAPI 3 description of every route (a test checks it against the router, both ways). */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: object) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: jsonContent(ref('Error')) });
const uuidParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', format: 'uuid' },
});
const nameParam = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'The workflow name.',
  schema: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$' },
};
const query = (name: string, description: string, schema: object = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const ticksParam = query('ticks', 'Next ticks listed per schedule (default 5).', {
  type: 'integer',
  minimum: 1,
  maximum: 50,
});
const jobResponse = (description: string) => ({ description, content: jsonContent(ref('Job')) });

const REPEATED_QUERY = 'A query parameter given more than once.';

/**
 * Every route refuses a repeated query parameter (the API handler checks it before any route runs),
 * so each operation's 400 says so: added to the one it lists, or listed.
 */
function withRepeatedQueryRefusal(
  paths: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  for (const item of Object.values(paths)) {
    for (const [key, operation] of Object.entries(item)) {
      if (key === 'parameters') continue;
      const responses = (operation as { responses: Record<string, { description: string }> }).responses;
      const listed = responses[400];
      responses[400] = listed
        ? { ...listed, description: `${listed.description} Or: ${REPEATED_QUERY.toLowerCase()}` }
        : error(REPEATED_QUERY);
    }
  }
  return paths;
}

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: {
      title: 'Switchyard',
      version: '1',
      description:
        'A workflow manager for queue-driven microservices. Every error is `{"error": {"code", "message"}}`. A query parameter given more than once is refused (400) on every route. Request bodies are read as JSON whatever their content type says.\n\nNamespaces: every route under `/api/workflow…`, `/api/workflows`, `/api/job…`, `/api/jobs` and `/api/queues` is also served as `/api/ns/{namespace}/…` (the same route beneath it), acting in that namespace; without the prefix it acts in `default`. A namespace that cannot be one (a `/` in it, say `a%2Fb`) is 400. Workflow names in paths, queries and answers are plain names within the namespace; jobs carry `namespace`.\n\nRoles (scoped tokens, `POST /api/tokens`): `read` may call the GET routes; `run` also starts, cancels, retries, signals, pauses and resumes jobs; `admin` also registers (PUT) and disables (DELETE) workflows and creates, lists and revokes tokens. A token of one namespace gets 404 for every other namespace, as if absent; 403 when its role is too low; 401 when the token is unknown or revoked. `/metrics` needs a token of every namespace (`*`).',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Locally, the root token of `switchyard serve --token`; anywhere, a scoped token (`POST /api/tokens`).',
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'Deployed behind API Gateway.',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
        JobStatus: {
          type: 'string',
          enum: [...JOB_STATUSES],
          description:
            '`queued`: a job of a workflow with `maxRunning`, waiting for one of its running jobs to end. `scheduled`: a delayed start (`?at=`) waiting for its time.',
        },
        Schedules: {
          type: 'object',
          description: "A workflow's schedules (of its latest version) and its scheduled jobs.",
          properties: {
            name: { type: 'string' },
            version: { type: 'integer' },
            enabled: { type: 'boolean' },
            schedules: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  cron: {
                    type: 'string',
                    description: '5 fields: minute hour day-of-month month day-of-week',
                  },
                  timezone: { type: 'string', description: 'IANA time zone' },
                  catchUp: { type: 'string', enum: ['all', 'latest'] },
                  input: { type: 'object' },
                  key: { type: 'string', description: "Names the schedule in each tick's derived job id." },
                  nextTicks: {
                    type: 'array',
                    items: { type: 'string', format: 'date-time' },
                    description: 'None while the workflow is disabled.',
                  },
                },
              },
            },
            scheduled: {
              type: 'array',
              description: 'Jobs waiting for their start time, soonest first (at most 100).',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string', format: 'uuid' },
                  startAt: { type: 'string', format: 'date-time' },
                  createdAt: { type: 'string', format: 'date-time' },
                },
              },
            },
            scheduledCount: { type: 'integer' },
          },
        },
        Step: {
          type: 'object',
          properties: {
            status: {
              type: 'string',
              enum: ['waiting', 'running', 'suspended', 'completed', 'skipped', 'failed', 'cancelled'],
            },
            attempts: { type: 'integer' },
            startedAt: { type: 'string', format: 'date-time' },
            endedAt: { type: 'string', format: 'date-time' },
            retryAt: { type: 'string', format: 'date-time' },
            deadline: { type: 'string', format: 'date-time' },
            error: { type: 'string' },
            children: { type: 'integer' },
            childrenDone: { type: 'integer' },
            childrenFailed: { type: 'integer' },
          },
        },
        Job: {
          type: 'object',
          required: [
            'uuid',
            'workflow',
            'version',
            'status',
            'input',
            'createdAt',
            'updatedAt',
            'steps',
            'running',
            'completed',
          ],
          properties: {
            uuid: { type: 'string', format: 'uuid' },
            workflow: { type: 'string' },
            version: { type: 'integer' },
            parent: { type: 'string', format: 'uuid', nullable: true },
            index: { type: 'integer', nullable: true },
            task: { type: 'string', nullable: true, description: 'The task a fan-out child runs.' },
            status: ref('JobStatus'),
            input: { type: 'object' },
            result: { type: 'object' },
            error: {
              type: 'object',
              properties: {
                step: { type: 'string', nullable: true },
                attempt: { type: 'integer' },
                message: { type: 'string' },
                at: { type: 'string', format: 'date-time' },
              },
            },
            createdAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
            endedAt: { type: 'string', format: 'date-time' },
            queuePosition: {
              type: 'integer',
              minimum: 1,
              description:
                "A queued job: its place in its workflow's `maxRunning` queue (1 starts next); absent past the first 1,000.",
            },
            startAt: { type: 'string', format: 'date-time', description: 'A delayed start (`?at=`).' },
            steps: { type: 'object', additionalProperties: ref('Step') },
            running: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  startTime: { type: 'string', format: 'date-time' },
                  attempt: { type: 'integer' },
                  tasks: {
                    type: 'array',
                    items: { type: 'string', format: 'uuid' },
                    description: 'Child job ids of a fan-out step (at most the first 1,000).',
                  },
                },
              },
            },
            completed: {
              type: 'array',
              description:
                'Completion order: `__start__` (the input), each step, and `__end__` (the result) for a completed job.',
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  startTime: { type: 'string', format: 'date-time' },
                  elapsed: { type: 'integer', description: 'nanoseconds' },
                  message: {},
                },
              },
            },
          },
        },
        JobSummary: {
          type: 'object',
          properties: {
            uuid: { type: 'string', format: 'uuid' },
            workflow: { type: 'string' },
            version: { type: 'integer' },
            status: ref('JobStatus'),
            createdAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
            startAt: { type: 'string', format: 'date-time', description: 'A delayed start (`?at=`).' },
            progress: {
              type: 'object',
              properties: {
                steps: { type: 'integer' },
                stepsDone: { type: 'integer' },
                children: { type: 'integer' },
                childrenDone: { type: 'integer' },
              },
            },
            error: {
              type: 'object',
              description: "a failed job's error; the message cut to 300 characters",
              properties: { step: { type: 'string', nullable: true }, message: { type: 'string' } },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }, { apiKey: [] }],
    paths: withRepeatedQueryRefusal({
      '/api/workflows': {
        get: {
          summary: 'List workflows',
          responses: {
            200: {
              description: 'One entry per workflow and vhost.',
              content: jsonContent({
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    vhost: { type: 'string' },
                    job_count: { type: 'integer', description: 'running and paused top-level jobs' },
                    version: { type: 'integer' },
                    enabled: { type: 'boolean' },
                    description: { type: 'string' },
                    jobs: { type: 'object', additionalProperties: { type: 'integer' } },
                  },
                },
              }),
            },
          },
        },
      },
      '/api/workflow/{name}': {
        parameters: [nameParam],
        get: {
          summary: "A workflow's running and recently completed job ids (as the original)",
          parameters: [
            query('interval', 'Completed within this many minutes (default 480; 0 = all).', {
              type: 'integer',
              minimum: 0,
            }),
            query('vhost', 'Only jobs on this vhost.'),
          ],
          responses: {
            200: {
              description: 'Job ids.',
              content: jsonContent({
                type: 'object',
                properties: {
                  running: { type: 'array', items: { type: 'string' } },
                  queued: {
                    type: 'array',
                    items: { type: 'string' },
                    description: 'Jobs waiting for a `maxRunning` slot, first to start first.',
                  },
                  completed: { type: 'array', items: { type: 'string' } },
                },
              }),
            },
            404: error('No such workflow.'),
          },
        },
        put: {
          summary: 'Register a definition (a new version unless identical)',
          requestBody: {
            required: true,
            content: {
              'application/yaml': { schema: { type: 'string' } },
              'application/json': { schema: { type: 'object' } },
            },
          },
          responses: {
            200: {
              description: 'Identical to the current version.',
              content: jsonContent({ type: 'object', properties: { version: { type: 'integer' } } }),
            },
            201: {
              description: 'A new version.',
              content: jsonContent({ type: 'object', properties: { version: { type: 'integer' } } }),
            },
            400: error('Invalid definition, or its name differs from the path.'),
          },
        },
        delete: {
          summary: 'Disable the workflow: new jobs are refused, running jobs go on',
          responses: { 200: { description: 'Disabled.' }, 404: error('No such workflow.') },
        },
        post: {
          summary: 'Start a job',
          parameters: [
            query('id', 'The job id (also accepted as the body field `id`).', {
              type: 'string',
              format: 'uuid',
            }),
            query('version', 'Run this version instead of the latest.', { type: 'integer', minimum: 1 }),
            query('vhost', "Run on this vhost (one of the workflow's)."),
            query(
              'at',
              'A delayed start: an RFC 3339 time, later than now and within a year. The job is `scheduled` until then.',
              { type: 'string', format: 'date-time' },
            ),
          ],
          requestBody: {
            required: false,
            content: jsonContent({ type: 'object', description: 'The job input.' }),
          },
          responses: {
            200: {
              description: 'The same job already exists (idempotent start).',
              content: jsonContent({ type: 'object', properties: { id: { type: 'string' } } }),
            },
            201: {
              description: 'Started.',
              content: jsonContent({ type: 'object', properties: { id: { type: 'string' } } }),
            },
            400: error('Input not a JSON object, a bad id, or an `at` malformed, past or over a year ahead.'),
            404: error('No such workflow or version.'),
            409: error('The id is taken by a different job, or the workflow is disabled.'),
            413: error('Body too large.'),
            415: error(
              'From a browser (`Origin` or `Sec-Fetch-Site` sent): a body not sent as application/json.',
            ),
          },
        },
      },
      '/api/workflow/{name}/schedules': {
        parameters: [nameParam],
        get: {
          summary: "A workflow's schedules with their next ticks, and its scheduled jobs",
          parameters: [ticksParam],
          responses: {
            200: { description: 'The schedules.', content: jsonContent(ref('Schedules')) },
            400: error('A bad `ticks`.'),
            404: error('No such workflow.'),
          },
        },
      },
      '/api/schedules': {
        get: {
          summary: 'The schedules and scheduled jobs of every workflow that has any',
          parameters: [ticksParam],
          responses: {
            200: {
              description: 'One entry per workflow.',
              content: jsonContent({ type: 'array', items: ref('Schedules') }),
            },
            400: error('A bad `ticks`.'),
          },
        },
      },
      '/api/workflow/{name}/definition': {
        parameters: [nameParam],
        get: {
          summary: 'A definition and the list of versions',
          parameters: [
            query('version', 'This version instead of the latest.', { type: 'integer', minimum: 1 }),
          ],
          responses: { 200: { description: 'The definition.' }, 404: error('No such workflow or version.') },
        },
      },
      '/api/jobs': {
        get: {
          summary: 'List jobs, newest first',
          parameters: [
            query('workflow', 'Only this workflow.'),
            query('status', 'Only this status, or `all` (default: running).', {
              type: 'string',
              enum: [...JOB_STATUSES, 'all'],
            }),
            query('children', '1: include fan-out children.'),
            query('detail', '1: summaries instead of ids.'),
            query('limit', 'Page size (default 100).', { type: 'integer', minimum: 1, maximum: 1000 }),
            query('cursor', 'From the previous page.'),
          ],
          responses: {
            200: {
              description: 'A page of jobs.',
              content: jsonContent({
                type: 'object',
                properties: {
                  jobs: { type: 'array', items: { oneOf: [{ type: 'string' }, ref('JobSummary')] } },
                  cursor: { type: 'string' },
                },
              }),
            },
          },
        },
      },
      '/api/job/{id}': {
        parameters: [uuidParam('id', 'The job id (a child id works too).')],
        get: {
          summary: 'The job document',
          parameters: [
            query(
              'wait',
              'Answer when the job moves on from the version named in `If-None-Match` (without it, from the version it has now), or after this many seconds (at most 25); a job that has ended answers at once.',
              { type: 'integer', minimum: 0 },
            ),
            {
              name: 'If-None-Match',
              in: 'header',
              required: false,
              description:
                'The `ETag` of the copy the caller holds: 304 while the job is still at that version.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            200: {
              ...jobResponse('The job.'),
              headers: {
                ETag: {
                  description: "The job's version (weak): its revision and its fan-outs' finished children.",
                  schema: { type: 'string' },
                },
              },
            },
            304: { description: 'The job is still at the version named in `If-None-Match`.' },
            400: error('Not a UUID.'),
            404: error('No such job.'),
          },
        },
        delete: {
          summary: 'Cancel the job (a child id cancels its top-level job)',
          responses: {
            200: jobResponse('Cancelled.'),
            404: error('No such job.'),
            409: error('Already finished.'),
          },
        },
      },
      '/api/job/{id}/children': {
        parameters: [uuidParam('id', 'The parent job.')],
        get: {
          summary: "A fan-out step's children, in pages",
          parameters: [
            {
              name: 'step',
              in: 'query',
              required: true,
              description: 'The fan-out step.',
              schema: { type: 'string' },
            },
            query('cursor', 'From the previous page.'),
            query('limit', 'Page size (default 1000).', { type: 'integer', minimum: 1, maximum: 1000 }),
          ],
          responses: {
            200: {
              description: 'A page of children.',
              content: jsonContent({
                type: 'object',
                properties: {
                  children: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: {
                        uuid: { type: 'string' },
                        index: { type: 'integer' },
                        status: ref('JobStatus'),
                      },
                    },
                  },
                  cursor: { type: 'string' },
                },
              }),
            },
            400: error('Missing or unknown step.'),
            404: error('No such job.'),
          },
        },
      },
      '/api/job/{id}/signal/{step}': {
        parameters: [
          uuidParam('id', 'The job (for a signal step inside a task, the child job).'),
          { name: 'step', in: 'path', required: true, schema: { type: 'string' } },
        ],
        post: {
          summary: "Complete a signal step: its output is the step's input with the body's keys over it",
          requestBody: { required: false, content: jsonContent({ type: 'object' }) },
          responses: {
            200: jobResponse('Signalled.'),
            400: error('Not a signal step, or the body is not a JSON object.'),
            404: error('No such job.'),
            409: error('Not ready yet, or already done.'),
          },
        },
      },
      '/api/job/{id}/retry': {
        parameters: [uuidParam('id', 'The job (a child id retries its top-level job).')],
        post: {
          summary: 'Run a failed or cancelled job again',
          responses: {
            200: jobResponse('Running again.'),
            404: error('No such job.'),
            409: error('Not failed or cancelled.'),
          },
        },
      },
      '/api/job/{id}/pause': {
        parameters: [uuidParam('id', 'The job (a child id pauses its top-level job).')],
        post: {
          summary:
            'Pause the job and its children: nothing new is dispatched until resume; replies to requests already sent are stored, timers run on',
          responses: {
            200: jobResponse('Paused (or already paused: nothing changed).'),
            404: error('No such job.'),
            409: error('Already finished.'),
          },
        },
      },
      '/api/job/{id}/resume': {
        parameters: [uuidParam('id', 'The job (a child id resumes its top-level job).')],
        post: {
          summary: 'Resume a paused job: what became ready while paused (and retries held) is dispatched',
          responses: {
            200: jobResponse('Running (or already running: nothing changed).'),
            404: error('No such job.'),
            409: error('Already finished.'),
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'Health of the store and the bus',
          responses: {
            200: { description: 'Both reachable.' },
            503: { description: "One is not, or the store's last write failed on storage (a full disk)." },
          },
        },
      },
      '/api/queues': {
        get: {
          summary: 'Each step queue of the registered workflows, as the broker sees it',
          description:
            'The queues of the latest version of each workflow (or of `workflow`), each with the steps that send to it and what the bus says of it: `exists` (false: not declared yet; the check never creates it), `ready` messages, `consumers` (a number, or `unknown` on SQS), `inFlight` (SQS), or `error` when the broker could not be asked.',
          parameters: [{ name: 'workflow', in: 'query', schema: { type: 'string' } }],
          responses: {
            200: {
              description:
                '`{ queues: [{ queue, vhost, exists, ready, consumers, inFlight?, error?, steps: [{ workflow, task?, step }] }] }`.',
            },
          },
        },
      },
      '/api/namespaces': {
        get: {
          summary: 'The namespaces the caller sees',
          description:
            'For a token of every namespace (`*`, and the root): every namespace that holds a workflow, and `default`; for a scoped token: its own namespace.',
          responses: {
            200: {
              description:
                '`{ namespaces: [name], role, scope, settings: [{ namespace, queuePrefix?, vhosts?, updatedAt? }] }`: scope is the token namespace or `*`; settings are what the operator set for each namespace listed.',
            },
          },
        },
      },
      '/api/namespaces/{namespace}': {
        parameters: [
          {
            name: 'namespace',
            in: 'path',
            required: true,
            schema: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$', maxLength: 64 },
          },
        ],
        get: {
          summary: "A namespace's settings: its queue prefix and allowed vhosts",
          description: 'A token of another namespace finds nothing (404).',
          responses: {
            200: { description: '`{ namespace, queuePrefix?, vhosts?, updatedAt? }`' },
            404: { description: 'A namespace this token does not see.' },
          },
        },
        put: {
          summary: "Set a namespace's queue prefix and allowed vhosts (a token of every namespace, admin)",
          description:
            "Only the operator decides which queues and vhosts a namespace may use: every step queue of its workflows then starts with the prefix, no other namespace may use it, and its jobs run only on the vhosts listed. A key left out stays as it is; `null` takes it away. A prefix that overlaps another namespace's is 400.",
          requestBody: {
            required: true,
            content: jsonContent({
              type: 'object',
              additionalProperties: false,
              properties: {
                queuePrefix: { type: ['string', 'null'], pattern: '^[A-Za-z0-9_.-]{1,64}$' },
                vhosts: { type: ['array', 'null'], items: { type: 'string' }, maxItems: 16 },
              },
            }),
          },
          responses: {
            200: {
              description: 'The settings as stored: `{ namespace, queuePrefix?, vhosts?, updatedAt }`.',
            },
            400: {
              description:
                "A prefix or vhost that cannot be one, or a prefix overlapping another namespace's.",
            },
            403: { description: 'Not a token of every namespace with the admin role.' },
          },
        },
      },
      '/api/tokens': {
        post: {
          summary: 'Create a scoped token (admin)',
          description:
            'The secret is in this answer only: the store keeps its SHA-256 and the metadata. A namespace admin grants its own namespace only (403 otherwise).',
          requestBody: {
            required: true,
            content: jsonContent({
              type: 'object',
              required: ['namespace', 'role'],
              additionalProperties: false,
              properties: {
                namespace: { type: 'string', description: 'a namespace, or `*` for every namespace' },
                role: { type: 'string', enum: ['read', 'run', 'admin'] },
                description: { type: 'string', maxLength: 200 },
              },
            }),
          },
          responses: {
            201: { description: '`{ id, namespace, role, description, createdAt, secret }`.' },
            400: error(
              'A bad namespace (a `/` in it), an unknown role, an unknown field: nothing is created.',
            ),
            403: error('The caller is not an admin of that scope.'),
          },
        },
        get: {
          summary: 'List the tokens the caller administers (admin), without secrets',
          responses: {
            200: { description: '`{ tokens: [{ id, namespace, role, description, createdAt }] }`.' },
          },
        },
      },
      '/api/tokens/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        delete: {
          summary: 'Revoke a token (admin), at once',
          description:
            'Locally at once. Deployed, another API instance may still accept it for up to 30 seconds (its cache of tokens found).',
          responses: { 200: { description: '`{ id, revoked: true }`.' }, 404: error('No such token.') },
        },
      },
      '/metrics': {
        get: {
          summary: 'Counters and histograms (Prometheus text format)',
          responses: {
            200: { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
          },
        },
      },
      '/openapi.json': {
        get: { summary: 'This document', security: [], responses: { 200: { description: 'OpenAPI 3.' } } },
      },
      '/': {
        get: {
          summary: 'The dashboard',
          security: [],
          responses: {
            200: { description: 'HTML.', content: { 'text/html': { schema: { type: 'string' } } } },
          },
        },
      },
      '/assets/{file+}': {
        parameters: [{ name: 'file+', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          summary: "The dashboard's files",
          security: [],
          responses: { 200: { description: 'A file.' }, 404: error('No such file.') },
        },
      },
    }),
  };
}
