/**
 * Thrown by a handler to fail the step at once: the SDK answers with an error reply
 * (`type: error`, body `{"error": message}`) and acknowledges the request, without redelivery.
 * Any other error is treated as transient: the request is handed back and delivered again.
 */
export class WorkerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WorkerError';
  }
}
