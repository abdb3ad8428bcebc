import { type NotifyTarget, urlProblem } from '../../engine/index.js';

/** Where deliveries may go: the operator's allow-list of hosts, and whether only https is taken. */
export interface DeliveryRules {
  /**
   * Host names (or `*.example.com` for its subdomains) deliveries may go to. Absent: any host.
   * serve's default; deployed, set `NOTIFY_ALLOW_HOSTS` (docs/notifications.md, "Where deliveries go").
   */
  allowHosts?: readonly string[];
  /** Refuse plain http (deployed: always on). */
  httpsOnly?: boolean;
}

/** Attempts per delivery before it is dead-lettered. */
export const MAX_DELIVERY_ATTEMPTS = 8;
/** The first retry's delay; each next one doubles, up to `MAX_RETRY_DELAY_MS`. */
export const FIRST_RETRY_DELAY_MS = 30_000;
export const MAX_RETRY_DELAY_MS = 30 * 60_000;
/** A receiver that has not answered by then has failed the attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The delay before attempt `attempts + 1`, after `attempts` failed ones: 30 s doubling to a cap of
 * 30 min, with "equal jitter" (half fixed, half drawn) so that receivers coming back up are not
 * hit by every delivery at once. 8 attempts span 31 to 62 minutes.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(full / 2 + random() * (full / 2));
}

/** Why deliveries may not go to `url` under `rules`, if they may not. */
export function deliveryUrlProblem(url: string, rules: DeliveryRules): string | undefined {
  const problem = urlProblem(url);
  if (problem) return problem;
  const parsed = new URL(url);
  if (rules.httpsOnly && parsed.protocol !== 'https:')
    return `"url" ${JSON.stringify(url)} must use https: this deployment posts only over https`;
  const allowed = rules.allowHosts;
  if (allowed && !allowed.some((host) => hostMatches(parsed.hostname, host))) {
    return `"url" ${JSON.stringify(url)}: host "${parsed.hostname}" is not among the hosts deliveries may go to (${allowed.join(', ') || 'none'})`;
  }
  return undefined;
}

function hostMatches(hostname: string, allowed: string): boolean {
  const host = hostname.toLowerCase();
  const rule = allowed.toLowerCase();
  return rule.startsWith('*.') ? host.endsWith(rule.slice(1)) : host === rule;
}

/** The problems of a definition's targets under the rules, each naming its target. */
export function notifyTargetProblems(targets: readonly NotifyTarget[], rules: DeliveryRules): string[] {
  return targets.flatMap((target, index) => {
    const problem = deliveryUrlProblem(target.url, rules);
    return problem ? [`"notify" target ${index + 1}: ${problem}`] : [];
  });
}
