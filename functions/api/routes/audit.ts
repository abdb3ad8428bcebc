import { json } from '../http.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { AuditPageDocument } from '../schemas/documents.js';
import { AuditCursor } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';
import { pageCursorParameter, pageLimitParameter } from '../schemas/shared-parameters.js';

const auditQuery = {
  limit: pageLimitParameter(500, 100),
  cursor: pageCursorParameter(AuditCursor),
} as const satisfies ParameterSpecs;

/** Who registered and disabled workflows, created and revoked tokens, changed the namespace: newest first. */
async function listAudit(
  request: CheckedRequest<NoParameters, typeof auditQuery, NoParameters>,
  deps: ApiDeps,
) {
  const page = await deps.service.listAudit({
    namespace: request.namespace,
    limit: request.query.limit ?? 100,
    cursor: request.query.cursor,
  });
  const body: Record<string, unknown> = {
    entries: page.entries.map(({ at, ...entry }) => ({ ...entry, at: new Date(at).toISOString() })),
  };
  if (page.cursor !== undefined) body.cursor = page.cursor;
  return json(200, body);
}

export const auditRoutes = [
  route({
    method: 'GET',
    path: '/api/audit',
    auth: true,
    role: 'admin',
    namespaced: true,
    summary: "Who changed the namespace's workflows, tokens and settings, newest first",
    description:
      "A job's own commands (start, signal, pause, resume, cancel, retry) are in its history: `GET /api/job/{id}/events`. Entries are kept 90 days.",
    query: auditQuery,
    responses: {
      200: { description: 'A page of entries.', schema: AuditPageDocument },
      400: refusal('A cursor that is not one of this list.'),
    },
    handle: listAudit,
  }),
];
