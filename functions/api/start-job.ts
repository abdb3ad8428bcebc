import { inNamespace, type JobRecord } from '../../engine/index.js';
import { ManagerError } from '../manager/errors.js';
import type { StartJobParams } from '../manager/start-job-params.js';
import type { ApiService } from './api-service.js';
import { ApiError } from './http.js';

/**
 * Starts a job for a request acting in `namespace`. A chosen id that another namespace's job holds
 * is refused as if that job were absent (404, as every route answers for it), never as the
 * manager's conflict: a 409 would tell the caller that the id names a job somewhere. Nothing is
 * created either way (the manager refused the start).
 */
export async function startJob(
  service: Pick<ApiService, 'startJob' | 'getJob'>,
  namespace: string,
  params: StartJobParams,
): Promise<{ created: boolean; job: JobRecord }> {
  try {
    return await service.startJob({ ...params, refuseOversized: true });
  } catch (error) {
    if (params.id !== undefined && error instanceof ManagerError && error.code === 'conflict') {
      const id = params.id.toLowerCase();
      const holder = await service.getJob(id);
      if (holder && !inNamespace(holder.workflow, namespace)) {
        throw new ApiError('not_found', `the id ${id} cannot start a job here: choose another`);
      }
    }
    throw error;
  }
}
