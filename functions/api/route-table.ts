import { json } from './http.js';
import { openApiDocument } from './openapi.js';
import { type Route, route } from './router.js';
import { auditRoutes } from './routes/audit.js';
import { callbackRoutes } from './routes/callbacks.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { eventRoutes } from './routes/events.js';
import { jobBatchRoutes } from './routes/job-batches.js';
import { jobRoutes } from './routes/jobs.js';
import { namespaceRoutes } from './routes/namespaces.js';
import { scheduleRoutes } from './routes/schedules.js';
import { systemRoutes } from './routes/system.js';
import { tokenRoutes } from './routes/tokens.js';
import { workflowRoutes } from './routes/workflows.js';

let described: Record<string, unknown> | undefined;

/** `/openapi.json` describes the table it is part of: built once, from the routes' own schemas. */
const openApiRoute = route({
  method: 'GET',
  path: '/openapi.json',
  auth: false,
  summary: 'This document',
  responses: { 200: { description: 'OpenAPI 3.1.' } },
  handle: async () => {
    described ??= openApiDocument(routes);
    return json(200, described);
  },
});

/** Every route of the API (api.md), each with its schemas, its role and whether a namespace scopes it. */
export const routes: readonly Route[] = [
  ...workflowRoutes,
  ...scheduleRoutes,
  ...jobRoutes,
  ...jobBatchRoutes,
  ...callbackRoutes,
  ...deliveryRoutes,
  ...eventRoutes,
  ...tokenRoutes,
  ...auditRoutes,
  ...namespaceRoutes,
  ...systemRoutes,
  openApiRoute,
];
