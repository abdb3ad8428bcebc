import type { SettingsDocument as NamespaceSettingsDocument } from '../../api/routes/namespaces.js';
import { ApiClient, type ClientOptions } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;
type NamespaceOptions = ClientOptions & { output?: string };

/** `switchyard namespaces`: the namespaces the token sees, with what the operator set for each. */
export async function listNamespaces(options: NamespaceOptions, out: Out): Promise<void> {
  const { settings } = await new ApiClient(options).get<{ settings: NamespaceSettingsDocument[] }>(
    '/api/namespaces',
  );
  if (outputFormat(options.output) === 'json') {
    out(JSON.stringify(settings, null, 2));
    return;
  }
  const p = paint(colourFor(process.stdout));
  const rows = settings.map((entry) => [
    entry.namespace,
    entry.queuePrefix ?? '-',
    entry.vhosts === undefined
      ? entry.namespace === 'default'
        ? 'any'
        : '-'
      : entry.vhosts.join(', ') || 'none',
  ]);
  out(renderTable(['NAMESPACE', 'QUEUE PREFIX', 'VHOSTS'], rows, p));
}

/**
 * `switchyard namespace set NS`: the operator (a token of `*` with `admin`) gives a namespace its
 * queue prefix and the vhosts it may use, or takes them away.
 */
export async function setNamespace(
  namespace: string,
  options: NamespaceOptions & {
    queuePrefix?: string | false;
    vhost?: string[] | false;
  },
  out: Out,
): Promise<void> {
  const body: Record<string, unknown> = {};
  if (options.queuePrefix !== undefined)
    body.queuePrefix = options.queuePrefix === false ? null : options.queuePrefix;
  if (options.vhost !== undefined) body.vhosts = options.vhost === false ? null : options.vhost;
  const { body: settings } = await new ApiClient(options).request<NamespaceSettingsDocument>(
    'PUT',
    `/api/namespaces/${encodeURIComponent(namespace)}`,
    JSON.stringify(body),
  );
  out(outputFormat(options.output) === 'json' ? JSON.stringify(settings, null, 2) : describe(settings));
}

/** `switchyard namespace show NS`: what the operator set for a namespace the token sees. */
export async function showNamespace(namespace: string, options: NamespaceOptions, out: Out): Promise<void> {
  const settings = await new ApiClient(options).get<NamespaceSettingsDocument>(
    `/api/namespaces/${encodeURIComponent(namespace)}`,
  );
  out(outputFormat(options.output) === 'json' ? JSON.stringify(settings, null, 2) : describe(settings));
}

function describe(settings: NamespaceSettingsDocument): string {
  const prefix =
    settings.queuePrefix === undefined ? 'no queue prefix' : `queue prefix "${settings.queuePrefix}"`;
  const vhosts =
    settings.vhosts === undefined
      ? settings.namespace === 'default'
        ? 'any vhost'
        : "the broker URL's vhost only"
      : settings.vhosts.length
        ? `vhosts ${settings.vhosts.map((vhost) => `"${vhost}"`).join(', ')}`
        : "the broker URL's vhost only";
  return `namespace ${settings.namespace}: ${prefix}; ${vhosts}`;
}
