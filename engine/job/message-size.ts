/** Replies, and the requests sent to workers, may be this large by default (SQS's limit too). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
