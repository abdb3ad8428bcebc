/** Completed out of total as a thin bar, failures in red after them. */
export function ProgressBar({ done, total, failed = 0 }: { done: number; total: number; failed?: number }) {
  const part = (n: number) => (total > 0 ? `${Math.min(100, (n / total) * 100)}%` : '0%');
  return (
    <span
      class="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={done}
      title={`${done} of ${total} completed${failed ? `, ${failed} failed` : ''}`}
    >
      <span class="progress-done" style={{ width: part(done) }} />
      {failed > 0 && <span class="progress-failed" style={{ width: part(failed) }} />}
    </span>
  );
}
