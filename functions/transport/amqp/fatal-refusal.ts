/**
 * A refusal that connecting again cannot cure (a wrong password, a reply queue another process
 * consumes exclusively): the connection stops for good and everyone waiting on it gets this error.
 */
export class FatalRefusalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FatalRefusalError';
  }
}

/** amqplib's error when the broker refuses the login (403 ACCESS_REFUSED during the handshake). */
export function isLoginRefusal(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.message.startsWith('Handshake terminated by server: 403') &&
    error.message.includes('ACCESS_REFUSED')
  );
}
