/** The broker the local tools use when nothing else is configured. */
export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * The URL of `vhost` on the broker of `url`: the same scheme, host, credentials and query, with the
 * path replaced. `null` keeps the URL's own vhost.
 */
export function urlForVhost(url: string, vhost: string | null): string {
  const parsed = parseAmqpUrl(url);
  if (vhost === null) return url;
  parsed.pathname = `/${encodeURIComponent(vhost)}`;
  return parsed.toString();
}

/** The vhost a URL names (its path), `/` when it names none, as amqplib reads it. */
export function vhostOfUrl(url: string): string {
  const path = parseAmqpUrl(url).pathname;
  if (path === '' || path === '/') return '/';
  return decodeURIComponent(path.slice(1));
}

/** The URL with its password replaced by `***`: safe for logs and error messages. */
export function redactUrl(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return '<unparseable AMQP URL>';
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/**
 * `text` with every occurrence of the URL's password (raw and percent-decoded) and of the URL itself
 * replaced, for messages that come from elsewhere (amqplib errors) and might quote either.
 */
export function redactSecrets(text: string, url: string): string {
  let result = text.split(url).join(redactUrl(url));
  for (const secret of passwordForms(url)) result = result.split(secret).join('***');
  return result;
}

/** An error's message with the URL's secrets removed. */
export function describeError(error: unknown, url: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return redactSecrets(message, url);
}

function passwordForms(url: string): string[] {
  const password = URL.parse(url)?.password ?? '';
  if (password === '') return [];
  const forms = new Set([password]);
  try {
    forms.add(decodeURIComponent(password));
  } catch {
    // A password with a stray `%`: the raw form is all there is.
  }
  return [...forms];
}

function parseAmqpUrl(url: string): URL {
  const parsed = URL.parse(url);
  if (!parsed) throw new Error(`invalid AMQP URL: ${redactUrl(url)}`);
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
    throw new Error(`an AMQP URL starts with amqp:// or amqps://, not ${parsed.protocol}//`);
  }
  return parsed;
}
