import { Tracer } from '@aws-lambda-powertools/tracer';

/** X-Ray through Powertools Tracer: imported only when tracing is on (from-env.ts), so off it costs nothing. */
export interface Tracing {
  /** The AWS SDK client, its calls recorded as subsegments. */
  captureClient<C extends object>(client: C): C;
  /** The handler, each invocation a `## <handler>` subsegment annotated with the cold start and service. */
  traceHandler<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
}

/**
 * Powertools' manual instrumentation (its Tracer documentation). Outside Lambda (tests, `serve`) the
 * Tracer disables itself: clients are returned as they are and the subsegment is a dummy. Responses are
 * not recorded (they hold job data); errors are.
 */
export function createTracing(): Tracing {
  // The SDK clients are captured one by one: capturing all HTTP requests too would record each call twice.
  const tracer = new Tracer({ captureHTTPsRequests: false });
  const name = `## ${process.env._HANDLER ?? 'handler'}`;
  return {
    captureClient: (client) => tracer.captureAWSv3Client(client),
    traceHandler:
      (handler) =>
      async (...args) => {
        const parent = tracer.getSegment();
        if (!parent) return handler(...args);
        const subsegment = parent.addNewSubsegment(name);
        tracer.setSegment(subsegment);
        tracer.annotateColdStart();
        tracer.addServiceNameAnnotation();
        try {
          return await handler(...args);
        } catch (error) {
          tracer.addErrorAsMetadata(error instanceof Error ? error : new Error(String(error)));
          throw error;
        } finally {
          subsegment.close();
          tracer.setSegment(parent);
        }
      },
  };
}
