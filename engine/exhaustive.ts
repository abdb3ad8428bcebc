/**
 * The end of a `switch` over a union: `default: return unhandled(event, 'job event')`. A new variant
 * without its case fails `tsc` here (it is not `never`), instead of being silently ignored.
 */
export function unhandled(value: never, what: string): never {
  const kind = (value as { type?: unknown; kind?: unknown; op?: unknown } | null) ?? {};
  throw new Error(`unhandled ${what}: ${JSON.stringify(kind.type ?? kind.kind ?? kind.op ?? value)}`);
}
