import type { TokenListing } from '../../api/scoped-tokens.js';
import { ApiClient, type ClientOptions } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;
type TokenOptions = ClientOptions & { output?: string };

/**
 * `switchyard token create`: a scoped token of `--namespace` (or `*`) and `--role`. The secret is
 * printed once, alone on stdout, so that a script can take it; the server keeps only its hash.
 */
export async function createToken(
  options: TokenOptions & { role: string; description?: string; scope?: string },
  out: Out,
): Promise<void> {
  const api = new ApiClient(options);
  const body = JSON.stringify({
    namespace: options.scope ?? api.namespace,
    role: options.role,
    description: options.description ?? '',
  });
  const { body: created } = await api.request<TokenListing & { secret: string }>('POST', '/api/tokens', body);
  if (outputFormat(options.output) === 'json') {
    out(JSON.stringify(created, null, 2));
    return;
  }
  process.stderr.write(
    `token ${created.id}: ${created.role} of ${created.namespace}; the secret below is shown once, keep it now\n`,
  );
  out(created.secret);
}

/** `switchyard token list`: the tokens the caller administers, without secrets. */
export async function listTokens(options: TokenOptions, out: Out): Promise<void> {
  const { tokens } = await new ApiClient(options).get<{ tokens: TokenListing[] }>('/api/tokens');
  if (outputFormat(options.output) === 'json') {
    out(JSON.stringify(tokens, null, 2));
    return;
  }
  if (!tokens.length) {
    out('no tokens');
    return;
  }
  const p = paint(colourFor(process.stdout));
  const rows = tokens.map((token) => [
    token.id,
    token.namespace,
    token.role,
    token.createdAt,
    token.description,
  ]);
  out(renderTable(['ID', 'NAMESPACE', 'ROLE', 'CREATED', 'DESCRIPTION'], rows, p));
}

/** `switchyard token revoke ID`: refused from the next request on (deployed: within 30 seconds). */
export async function revokeToken(id: string, options: TokenOptions, out: Out): Promise<void> {
  await new ApiClient(options).request('DELETE', `/api/tokens/${encodeURIComponent(id)}`);
  out(`token ${id} revoked`);
}
