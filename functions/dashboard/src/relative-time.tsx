import { absoluteTime, relativeTime } from './format.js';

/** "3 min ago", with the exact time on hover. */
export function RelativeTime({ iso, now }: { iso: string | undefined; now: number }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}
