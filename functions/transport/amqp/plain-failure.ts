/**
 * What to check when RabbitMQ cannot be reached, in plain words, for the failures people meet
 * first: nothing listening, a host name that does not resolve, no answer, a port that is not AMQP.
 */
export function connectFailureHint(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const has = (text: string) => code === text || message.includes(text);
  if (has('ECONNREFUSED'))
    return 'nothing listens there: is RabbitMQ running (rabbitmq-server -detached)? Are the host and port in --amqp or AMQP_URL right? To try switchyard without a broker: serve --bus memory';
  if (has('ENOTFOUND') || has('EAI_AGAIN'))
    return 'the host name does not resolve: check the host in --amqp or AMQP_URL';
  if (has('ETIMEDOUT') || has('EHOSTUNREACH') || has('ENETUNREACH') || /timed? ?out/i.test(message))
    return 'no answer: check the host and port in --amqp or AMQP_URL, and that no firewall is in the way';
  if (message.includes('Socket closed abruptly') || has('ECONNRESET'))
    return 'something answered but not as RabbitMQ does: is the port the AMQP one (5672, or 5671 for amqps://)?';
  return undefined;
}

/** The user name of an AMQP URL (guest when it names none). */
export function amqpUser(url: string): string {
  const username = URL.parse(url)?.username ?? '';
  try {
    return decodeURIComponent(username) || 'guest';
  } catch {
    return username;
  }
}
