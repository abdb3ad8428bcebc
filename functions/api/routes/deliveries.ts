import { actorOf, type Delivery } from '../../../engine/index.js';
import { json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { DeliveryDocument, DeliveryPageDocument, JobDeliveriesDocument } from '../schemas/documents.js';
import { DeliveryCursor, DeliveryStateName, JobId } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { jobIdParameter, pageCursorParameter, pageLimitParameter } from '../schemas/shared-parameters.js';
import { requireJob } from './jobs.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A delivery as the API shows it: its record, times as ISO 8601, and whether a pump holds it. */
export function deliveryDocument(delivery: Delivery): Record<string, unknown> {
  const document: Record<string, unknown> = {
    id: delivery.id,
    jobId: delivery.jobId,
    type: delivery.body.type,
    url: delivery.url,
    secret: delivery.secret,
    state: delivery.state,
    attempts: delivery.attempts,
    createdAt: iso(delivery.createdAt),
    updatedAt: iso(delivery.updatedAt),
  };
  if (delivery.state === 'pending') document.nextAttemptAt = iso(delivery.nextAttemptAt);
  if (delivery.deliveredAt !== undefined) document.deliveredAt = iso(delivery.deliveredAt);
  if (delivery.lastStatus !== undefined) document.lastStatus = delivery.lastStatus;
  if (delivery.lastError !== undefined) document.lastError = delivery.lastError;
  if (delivery.takenAt !== undefined) document.posting = true;
  document.body = delivery.body;
  return document;
}

async function jobDeliveries(
  request: CheckedRequest<{ id: ReturnType<typeof jobIdParameter> }, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const job = await requireJob(deps, request.namespace, (request.params.id as string).toLowerCase());
  const deliveries = await deps.service.jobDeliveries(job.id);
  return json(200, { deliveries: deliveries.map(deliveryDocument) });
}

const listQuery = {
  state: {
    schema: DeliveryStateName,
    description: '`dead` (the dead letters, the default), `pending` or `delivered`.',
    emptyIsAbsent: true,
  },
  limit: pageLimitParameter(500, 100),
  cursor: pageCursorParameter(DeliveryCursor),
} as const satisfies ParameterSpecs;

async function listDeliveries(
  request: CheckedRequest<NoParameters, typeof listQuery, NoParameters>,
  deps: ApiDeps,
) {
  const page = await deps.service.listDeliveries({
    namespace: request.namespace,
    state: request.query.state ?? 'dead',
    limit: request.query.limit ?? 100,
    cursor: request.query.cursor,
  });
  const body: Record<string, unknown> = { deliveries: page.deliveries.map(deliveryDocument) };
  if (page.cursor !== undefined) body.cursor = page.cursor;
  return json(200, body);
}

const deliveryParams = {
  id: { schema: JobId, description: "The delivery's id (its `Switchyard-Delivery` header)." },
} as const satisfies ParameterSpecs;

async function redeliver(
  request: CheckedRequest<typeof deliveryParams, NoParameters, NoParameters>,
  deps: ApiDeps,
) {
  const id = (request.params.id as string).toLowerCase();
  const due = await deps.service.redeliver(id, request.namespace, actorOf(request.principal));
  return json(200, deliveryDocument(due));
}

export const deliveryRoutes = [
  route({
    method: 'GET',
    path: '/api/job/{id}/deliveries',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "The job's webhook deliveries (notify:), oldest first, and how each went",
    description: 'docs/notifications.md. Only top-level jobs notify.',
    params: { id: jobIdParameter('The job id.') },
    responses: {
      200: { description: "The job's deliveries.", schema: JobDeliveriesDocument },
      404: refusal('No such job.'),
    },
    handle: jobDeliveries,
  }),
  route({
    method: 'GET',
    path: '/api/deliveries',
    auth: true,
    role: 'read',
    namespaced: true,
    summary: "The namespace's webhook deliveries in one state (`state=dead`: the dead letters), newest first",
    query: listQuery,
    responses: {
      200: { description: 'A page of deliveries.', schema: DeliveryPageDocument },
      400: refusal('A state or a cursor that is not one.'),
    },
    handle: listDeliveries,
  }),
  route({
    method: 'POST',
    path: '/api/deliveries/{id}/redeliver',
    auth: true,
    role: 'run',
    namespaced: true,
    summary:
      'Post a webhook delivery again: due now, with its attempts anew (a dead letter, or one already delivered)',
    params: deliveryParams,
    responses: {
      200: { description: 'Due now.', schema: DeliveryDocument },
      404: refusal('No such delivery in the namespace.'),
      409: refusal('A delivery pump is posting it now, or it changed meanwhile.'),
    },
    handle: redeliver,
  }),
];
