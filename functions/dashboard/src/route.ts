import { JOB_FILTERS, type JobFilter } from './api-types.js';

/**
 * The page's views live in the URL's fragment (`#/jobs?status=failed`), so the page works under any
 * path: `/` locally, `/prod/` behind API Gateway.
 */
export type Route =
  | { view: 'workflows' }
  | { view: 'workflow'; name: string }
  | {
      view: 'jobs';
      workflow?: string;
      status: JobFilter;
      id?: string;
      input?: string;
      /** Searched on the server: search attributes (`customer=c-42,region=eu`) and error text. */
      attr?: string;
      error?: string;
    }
  | { view: 'job'; id: string; step?: string }
  | { view: 'not-found'; hash: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#/, '');
  const [pathPart = '', queryPart = ''] = text.split('?', 2);
  const segments = pathPart
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => safeDecode(segment));
  const query = new URLSearchParams(queryPart);
  const [first, second] = segments;
  if (segments.length === 0 || (first === 'workflows' && segments.length === 1)) return { view: 'workflows' };
  if (first === 'workflow' && second && segments.length === 2) return { view: 'workflow', name: second };
  if (first === 'jobs' && segments.length === 1) {
    const status = query.get('status') ?? 'all';
    return {
      view: 'jobs',
      status: (JOB_FILTERS as readonly string[]).includes(status) ? (status as JobFilter) : 'all',
      ...(query.get('workflow') ? { workflow: query.get('workflow') as string } : {}),
      ...(query.get('id') ? { id: query.get('id') as string } : {}),
      ...(query.get('input') ? { input: query.get('input') as string } : {}),
      ...(query.get('attr') ? { attr: query.get('attr') as string } : {}),
      ...(query.get('error') ? { error: query.get('error') as string } : {}),
    };
  }
  if (first === 'job' && second && segments.length === 2 && UUID.test(second)) {
    const step = query.get('step');
    return { view: 'job', id: second.toLowerCase(), ...(step ? { step } : {}) };
  }
  return { view: 'not-found', hash: text };
}

/** The fragment (with `#`) that shows a route. */
export function routeHref(route: Route): string {
  switch (route.view) {
    case 'workflows':
      return '#/';
    case 'workflow':
      return `#/workflow/${encodeURIComponent(route.name)}`;
    case 'jobs': {
      const query = new URLSearchParams();
      if (route.workflow) query.set('workflow', route.workflow);
      if (route.status !== 'all') query.set('status', route.status);
      if (route.id) query.set('id', route.id);
      if (route.input) query.set('input', route.input);
      if (route.attr) query.set('attr', route.attr);
      if (route.error) query.set('error', route.error);
      const text = query.toString();
      return `#/jobs${text ? `?${text}` : ''}`;
    }
    case 'job':
      return `#/job/${route.id}${route.step ? `?step=${encodeURIComponent(route.step)}` : ''}`;
    case 'not-found':
      return `#${route.hash}`;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
