import { ManagerError } from '../../functions/manager/errors.js';

/** The refusal a manager command threw: its code and message (the test fails if it was not refused). */
export async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ManagerError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}
