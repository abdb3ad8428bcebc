import { ApiClient, CliError, type ClientOptions } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;

interface DeliveryDocument {
  id: string;
  jobId: string;
  type: string;
  url: string;
  state: string;
  attempts: number;
  createdAt: string;
  nextAttemptAt?: string;
  lastStatus?: number;
  lastError?: string;
  posting?: boolean;
}

export interface DeliveriesOptions extends ClientOptions {
  output?: string;
  dead?: boolean;
  redeliver?: string;
}

/**
 * `switchyard deliveries JOB_ID`: a job's webhook deliveries; `--dead`: the namespace's dead letters;
 * `--redeliver ID`: post one again (docs/notifications.md).
 */
export async function deliveries(
  id: string | undefined,
  options: DeliveriesOptions,
  out: Out,
): Promise<void> {
  const format = outputFormat(options.output);
  const client = new ApiClient(options);
  const chosen = [id !== undefined, options.dead === true, options.redeliver !== undefined].filter(Boolean);
  if (chosen.length !== 1)
    throw new CliError('name a job id, or --dead, or --redeliver DELIVERY_ID (one of them)');
  let list: DeliveryDocument[];
  if (options.redeliver !== undefined) {
    const { body } = await client.request<DeliveryDocument>(
      'POST',
      `/api/deliveries/${encodeURIComponent(options.redeliver)}/redeliver`,
    );
    list = [body];
  } else if (options.dead) {
    list = [];
    let cursor: string | undefined;
    // At most 5,000 dead letters, newest first.
    for (let page = 0; page < 10; page++) {
      const query = new URLSearchParams({ state: 'dead', limit: '500' });
      if (cursor) query.set('cursor', cursor);
      const answer = await client.get<{ deliveries: DeliveryDocument[]; cursor?: string }>(
        `/api/deliveries?${query}`,
      );
      list.push(...answer.deliveries);
      cursor = answer.cursor;
      if (!cursor) break;
    }
  } else {
    const answer = await client.get<{ deliveries: DeliveryDocument[] }>(
      `/api/job/${encodeURIComponent(id as string)}/deliveries`,
    );
    list = answer.deliveries;
  }
  if (format === 'json') {
    out(JSON.stringify({ deliveries: list }, null, 2));
    return;
  }
  const p = paint(colourFor(process.stdout));
  const stateOf = (d: DeliveryDocument) =>
    d.state === 'delivered'
      ? p.green(d.state)
      : d.state === 'dead'
        ? p.red(d.state)
        : d.posting
          ? 'posting'
          : d.state;
  const rows = list.map((d) => [
    d.id,
    ...(options.dead ? [d.jobId] : []),
    d.type,
    stateOf(d),
    String(d.attempts),
    d.lastStatus === undefined ? '' : String(d.lastStatus),
    d.state === 'pending' && !d.posting && d.nextAttemptAt ? `next ${d.nextAttemptAt}` : (d.lastError ?? ''),
    d.url,
  ]);
  const headers = [
    'DELIVERY',
    ...(options.dead ? ['JOB'] : []),
    'EVENT',
    'STATE',
    'TRIES',
    'HTTP',
    'DETAIL',
    'URL',
  ];
  out(renderTable(headers, rows, p));
  if (options.redeliver !== undefined) out(p.dim('due now: the next round of the delivery pump posts it'));
}
