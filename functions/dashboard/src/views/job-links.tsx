import type { JobDocument } from '../api-types.js';
import { shortId } from '../format.js';
import { routeHref } from '../route.js';

/**
 * The jobs this one is linked to, as facts of its header: the job whose `workflow:` step called it,
 * the failed job it was started for (`onFailure`), and the job its own failure started.
 */
export function JobLinks({ job }: { job: Pick<JobDocument, 'calledBy' | 'causedBy' | 'followUp'> }) {
  return (
    <>
      {job.calledBy && (
        <div class="fact" data-link="called-by">
          <dt>Called by</dt>
          <dd>
            job <JobLink id={job.calledBy.id} />, step{' '}
            <a href={routeHref({ view: 'job', id: job.calledBy.id, step: job.calledBy.step })}>
              {job.calledBy.step}
            </a>
            {job.calledBy.attempt > 1 && <span class="muted"> (attempt {job.calledBy.attempt})</span>}
          </dd>
        </div>
      )}
      {job.causedBy && (
        <div class="fact" data-link="caused-by">
          <dt>Started because</dt>
          <dd>
            job <JobLink id={job.causedBy} /> failed
          </dd>
        </div>
      )}
      {job.followUp && (
        <div class="fact" data-link="follow-up">
          <dt>On failure</dt>
          <dd>
            started job <JobLink id={job.followUp} />
          </dd>
        </div>
      )}
    </>
  );
}

function JobLink({ id }: { id: string }) {
  return (
    <a class="mono" href={routeHref({ view: 'job', id })} title={id}>
      {shortId(id)}
    </a>
  );
}
