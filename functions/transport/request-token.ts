/**
 * Each request carries its attempt's token (protocol.md, "Reply authentication"): the AMQP header
 * `x-switchyard-token`, the SQS message attribute `token`. A worker echoes it on every reply to that
 * request; a manager with reply authentication on takes no reply without it.
 */
export const TOKEN_HEADER = 'x-switchyard-token';
export const TOKEN_ATTRIBUTE = 'token';

/** A token is short text: anything else in the header is no token (and is ignored). */
const MAX_TOKEN_LENGTH = 1024;

/** The token a message carries, when it carries one that can be. */
export function readToken(value: unknown): string | undefined {
  const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  return typeof text === 'string' && text.length > 0 && text.length <= MAX_TOKEN_LENGTH ? text : undefined;
}
