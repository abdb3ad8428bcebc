import {
  type Bus,
  type SecretResolver,
  type SendOptions,
  type StepRequest,
  UndeliverableError,
  withSecretValues,
} from '../../engine/index.js';

/**
 * The bus the manager sends through when `params` may name secrets: each request's `{ secret: NAME }`
 * values are replaced by the secrets' values as it is handed to the broker, and only then; the
 * request the store and the outbox keep still holds the reference. A request naming a secret the
 * resolver does not have is not sent: its attempt fails (`UndeliverableError`), naming the secret
 * and never a value. A resolver that fails (the secrets service is down) fails the whole send, which
 * is tried again as any send the bus could not make.
 */
export function secretResolvingBus(bus: Bus, resolver: SecretResolver | undefined): Bus {
  return {
    ensureQueues: (queues) => bus.ensureQueues(queues),
    ping: () => bus.ping(),
    close: () => bus.close(),
    ...(bus.inspectQueues
      ? { inspectQueues: (queues) => bus.inspectQueues?.(queues) ?? Promise.resolve([]) }
      : {}),
    async send(requests: readonly StepRequest[], options?: SendOptions): Promise<void> {
      const names = [...new Set(requests.flatMap((request) => request.secrets ?? []).map((ref) => ref.name))];
      if (!names.length) return bus.send(requests, options);
      const values = resolver ? await resolver.resolve(names) : new Map<string, string>();
      const unsent: UndeliverableError[] = [];
      const resolved: StepRequest[] = [];
      // The bus reports on the requests it was given: each is mapped back to the one it was made from.
      const originals = new Map<StepRequest, StepRequest>();
      for (const request of requests) {
        if (!request.secrets?.length) {
          resolved.push(request);
          originals.set(request, request);
          continue;
        }
        const body = withSecretValues(request.body, request.secrets, values);
        if (!body.ok) {
          const where = resolver ? 'is not set' : 'cannot be read: this manager was started without secrets';
          unsent.push(
            new UndeliverableError(
              `not sent: secret ${body.missing.map((name) => JSON.stringify(name)).join(', ')} ${where}`,
              request.correlationId,
            ),
          );
          continue;
        }
        const { secrets: _references, ...rest } = request;
        const sendable: StepRequest = { ...rest, body: body.body };
        resolved.push(sendable);
        originals.set(sendable, request);
      }
      const sendOptions: SendOptions | undefined = options && {
        ...options,
        ...(options.onSent
          ? { onSent: (request: StepRequest) => options.onSent?.(originals.get(request) ?? request) }
          : {}),
      };
      let failure: unknown;
      if (resolved.length) {
        try {
          await bus.send(resolved, sendOptions);
        } catch (error) {
          failure = error;
        }
      }
      if (!unsent.length) {
        if (failure !== undefined) throw failure;
        return;
      }
      if (failure === undefined) throw new AggregateError(unsent, 'requests naming unknown secrets');
      if (failure instanceof AggregateError)
        throw new AggregateError([...failure.errors, ...unsent], failure.message);
      throw failure;
    },
  };
}
