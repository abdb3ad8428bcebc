import { actorOf, type JsonObject } from '../../../engine/index.js';
import type { Callback } from '../api-service.js';
import { json } from '../http.js';
import { type ApiDeps, type CheckedRequest, type NoParameters, route } from '../router.js';
import { JobDocument } from '../schemas/documents.js';
import { AnyJsonObject, Bool, CallbackToken, CallbackType, Text } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { requireJob } from './jobs.js';

const callbackParams = {
  token: {
    schema: CallbackToken,
    description: "The attempt's token: the request's `x-switchyard-token` header (SQS: `token` attribute).",
  },
} as const;

const callbackFields = {
  type: {
    schema: CallbackType,
    description: 'What the attempt did, as a reply would say it.',
    required: true,
  },
  output: { schema: AnyJsonObject, description: "`success`: the step's output (default `{}`)." },
  error: { schema: Text, description: '`failure`: what went wrong.' },
  retryable: { schema: Bool, description: '`failure`: false when no retry can help.' },
  note: { schema: Text, description: '`suspend`: what the step waits for.' },
} as const;

/** The callback the checked body says. */
function callbackOf(body: JsonObject): Callback {
  switch (body.type) {
    case 'success':
      return body.output === undefined
        ? { type: 'success' }
        : { type: 'success', output: body.output as JsonObject };
    case 'failure':
      return {
        type: 'failure',
        ...(typeof body.error === 'string' ? { error: body.error } : {}),
        ...(body.retryable === false ? { retryable: false } : {}),
      };
    case 'heartbeat':
      return { type: 'heartbeat' };
    default:
      return typeof body.note === 'string' ? { type: 'suspend', note: body.note } : { type: 'suspend' };
  }
}

async function callback(
  request: CheckedRequest<typeof callbackParams, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const { token } = request.params;
  // The job the token names must be in the request's namespace, as for any command on a job.
  await requireJob(deps, request.namespace, await deps.service.callbackJobId(token));
  const job = await deps.service.callback(token, callbackOf(request.json), actorOf(request.principal));
  return json(200, await deps.service.jobDocument(job));
}

export const callbackRoutes = [
  route({
    method: 'POST',
    path: '/api/callback/{token}',
    auth: true,
    role: 'run',
    namespaced: true,
    summary:
      "Answer a step's attempt by its token, as its worker's reply would: success, failure, heartbeat or suspend",
    params: callbackParams,
    body: {
      kind: 'json',
      what: 'the callback',
      description: 'What the attempt did.',
      fields: callbackFields,
    },
    responses: {
      200: { description: 'Taken by the attempt.', schema: JobDocument },
      400: refusal('The body is not a callback (its type, or a field of the wrong kind).'),
      404: refusal('No attempt has this token, or its job is gone.'),
      409: refusal('The attempt no longer waits: it ended (answered, timed out, failed), naming why.'),
      413: refusal('The callback is larger than a reply may be.'),
    },
    handle: callback,
  }),
];
