/** The `x-attempt` header, when it is a whole number or a string of digits; otherwise undefined. */
export function attemptOf(headers: Record<string, unknown> | undefined): number | undefined {
  const value = headers?.['x-attempt'];
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && /^\s*\d{1,15}\s*$/.test(value)) return Number(value);
  return undefined;
}

/** A string property (`correlation_id`, `type`, `reply_to`) when it is a non-empty string. */
export function stringProperty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
