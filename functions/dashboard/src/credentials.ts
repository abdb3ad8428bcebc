/**
 * The one secret the page may need: locally `serve --token` (sent as `Authorization: Bearer`),
 * deployed an API Gateway API key (sent as `x-api-key`).
 */
export type CredentialKind = 'token' | 'api-key';

export interface Credential {
  kind: CredentialKind;
  value: string;
}

/**
 * Which credential a 401/403 asks for. Switchyard's own handler refuses with the codes
 * `unauthorized`/`forbidden` (`serve --token`, or the REST API's token authorizer). An HTTP API
 * (`-c api=http`), which has no API keys, refuses in its own fixed shape, `{"message":"Unauthorized"}`
 * or `"Forbidden"`: its token or JWT authorizer wants a bearer token. Anything else (the REST API's
 * `INVALID_API_KEY`, `ACCESS_DENIED`, …) comes from a REST API's key check.
 */
export function credentialKindFor(body: unknown): CredentialKind {
  const code = errorCode(body);
  if (code === 'unauthorized' || code === 'forbidden') return 'token';
  return isHttpApiRefusal(body) ? 'token' : 'api-key';
}

function isHttpApiRefusal(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || 'error' in body) return false;
  const message = (body as { message?: unknown }).message;
  return message === 'Unauthorized' || message === 'Forbidden';
}

export function errorCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export function errorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

/** The headers that carry a credential. */
export function credentialHeaders(credential: Credential | undefined): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'token'
    ? { authorization: `Bearer ${credential.value}` }
    : { 'x-api-key': credential.value };
}

/** Reads a stored credential back, ignoring anything malformed. */
export function parseCredential(text: string | null): Credential | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<Credential>;
    if (
      (value.kind === 'token' || value.kind === 'api-key') &&
      typeof value.value === 'string' &&
      value.value
    )
      return { kind: value.kind, value: value.value };
  } catch {}
  return undefined;
}

export const CREDENTIAL_LABELS: Record<CredentialKind, { name: string; hint: string }> = {
  token: {
    name: 'Access token',
    hint: 'This server requires a token (serve --token or SWITCHYARD_TOKEN; deployed, the root token or a scoped token). Enter it to continue.',
  },
  'api-key': {
    name: 'API key',
    hint: 'This API requires an API key (the ApiKey of the deployed stack). Enter it to continue.',
  },
};
