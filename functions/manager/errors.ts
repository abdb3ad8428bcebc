export type ManagerErrorCode = 'invalid' | 'not_found' | 'conflict' | 'too_large' | 'unavailable';

/** A request the manager refuses, with the reason users see (the API maps the code to a status). */
export class ManagerError extends Error {
  constructor(
    readonly code: ManagerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ManagerError';
  }
}
