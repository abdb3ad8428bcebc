import { ApiClient, CliError, type ClientOptions } from '../client.js';

type Out = (line: string) => void;

/** The search options `switchyard jobs` takes (GET /api/jobs's filters). */
export interface SearchOptions {
  workflow?: string;
  status?: string;
  attr?: string[];
  createdAfter?: string;
  createdBefore?: string;
  endedAfter?: string;
  endedBefore?: string;
  error?: string;
}

/** The API's query of a search: `--attr` given several times is one `attr` of comma-separated pairs. */
export function searchQuery(options: SearchOptions): URLSearchParams {
  const query = new URLSearchParams();
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== '') query.set(name, value);
  };
  set('workflow', options.workflow);
  set('status', options.status);
  set('createdAfter', options.createdAfter);
  set('createdBefore', options.createdBefore);
  set('endedAfter', options.endedAfter);
  set('endedBefore', options.endedBefore);
  set('error', options.error);
  if (options.attr?.length) query.set('attr', options.attr.join(','));
  return query;
}

/**
 * `--filter` of `cancel` and `retry`: the search as `NAME=VALUE` pairs separated by spaces or `&`
 * (`status=waiting attr=customer=c-42`), with the names of GET /api/jobs; `attr` given twice is one
 * of both. The server checks each and names a wrong one.
 */
export function filterQuery(filter: string): URLSearchParams {
  const query = new URLSearchParams();
  const attributes: string[] = [];
  for (const pair of filter.split(/[\s&]+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new CliError(`--filter: "${pair}" is not NAME=VALUE (e.g. status=waiting attr=customer=c-42)`);
    const name = pair.slice(0, at);
    const value = pair.slice(at + 1);
    if (name === 'attr') attributes.push(value);
    else query.set(name, value);
  }
  if (attributes.length) query.set('attr', attributes.join(','));
  if (![...query.keys()].length)
    throw new CliError('--filter names no filter: give at least one, e.g. --filter status=failed');
  return query;
}

interface BatchAnswer {
  matched: number;
  more?: boolean;
  changed?: string[];
  refused?: { uuid: string; message: string }[];
  cursor?: string;
}

/** The most batch calls one command makes (100 jobs each): 1,000,000 jobs. */
const MAX_CALLS = 10_000;

/**
 * `switchyard cancel|retry --filter …`: the jobs a search finds, 100 per call, until the search
 * has none left; `--dry-run` prints how many it finds and changes nothing.
 */
export async function batchCommand(
  verb: 'cancel' | 'retry',
  filter: string,
  options: ClientOptions & { dryRun?: boolean },
  out: Out,
): Promise<void> {
  const api = new ApiClient(options);
  const query = filterQuery(filter);
  if (options.dryRun) {
    query.set('dryRun', '1');
    const { body } = await api.request<BatchAnswer>('POST', `/api/jobs/${verb}?${query}`, '');
    const count = `${body.matched}${body.more ? '+' : ''}`;
    out(
      `${count} ${body.matched === 1 && !body.more ? 'job matches' : 'jobs match'}; dry run: nothing ${verb === 'cancel' ? 'cancelled' : 'retried'}`,
    );
    return;
  }
  let changed = 0;
  const refused: { uuid: string; message: string }[] = [];
  let cursor: string | undefined;
  for (let call = 0; call < MAX_CALLS; call++) {
    const page = new URLSearchParams(query);
    if (cursor) page.set('cursor', cursor);
    const { body } = await api.request<BatchAnswer>('POST', `/api/jobs/${verb}?${page}`, '');
    changed += body.changed?.length ?? 0;
    refused.push(...(body.refused ?? []));
    cursor = body.cursor;
    if (!cursor) break;
  }
  const done = verb === 'cancel' ? 'cancelled' : 'retried';
  out(`${changed} ${changed === 1 ? 'job' : 'jobs'} ${done}`);
  for (const refusal of refused.slice(0, 20)) out(`  not ${done}: ${refusal.message}`);
  if (refused.length > 20) out(`  … and ${refused.length - 20} more not ${done}`);
  if (cursor) out(`stopped after ${MAX_CALLS} calls: run it again for the rest`);
}
