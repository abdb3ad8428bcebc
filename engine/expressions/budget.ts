/**
 * The runtime budget of one evaluation, in units: what the evaluation walks and what it builds. One
 * unit is an element of a list or map (ranged over by a comprehension, read by an operator, built by
 * a literal, `+`, `split`…) or 64 characters of a string (joined, read or built); regular expressions
 * pay for their program times their input (regex.ts). cel-js runs a comprehension step in about
 * 1.5 µs, so 100,000 units is 0.1 to 0.2 s of work at worst (the engine evaluates inside a
 * transition), and lets a comprehension range over 100,000 elements, or 300 × 300 nested. What one
 * evaluation holds at once is bounded too: every value it builds was charged by its size, so at
 * most 100,000 elements and 6.4 million characters. Deterministic: it depends on the data, never on
 * time.
 */
export const COST_LIMIT = 100_000;

/** Characters of a string that one unit pays for. */
export const CHARS_PER_UNIT = 64;

// Evaluation is synchronous, so one counter serves every expression.
let budget = 0;

export class CostLimitExceeded extends Error {
  constructor() {
    super(`exceeds the cost limit (${COST_LIMIT} units)`);
  }
}

export function resetBudget(): void {
  budget = COST_LIMIT;
}

/** Whether this evaluation went over its budget (an error `||` or `exists` absorbed included). */
export function overBudget(): boolean {
  return budget < 0;
}

/**
 * Takes `units` from the budget, before the work they pay for. Throws once it is spent, so an
 * operation that `||` or `exists` let go on after that fails at its first charge, having done
 * nothing.
 */
export function charge(units: number): void {
  budget -= units;
  if (budget < 0) throw new CostLimitExceeded();
}

/** Units left in this evaluation (0 once spent). */
export function remainingBudget(): number {
  return Math.max(0, budget);
}

/** What one unit pays for in a string read or built: whole blocks of 64 characters. */
export function chargeString(text: string): void {
  charge(Math.floor(text.length / CHARS_PER_UNIT));
}

/** Elements of a list or map, at its top level (0 for anything else: a type, a timestamp, bytes). */
export function sizeOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  if (isObject(value)) return Object.keys(value).length;
  return 0;
}

/** A map as JSON or a CEL literal makes it: a plain object, not an instance of a class. */
function isObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Charges a value as a whole, nested lists and maps and their strings included: what deep equality
 * or membership may read. Charges as it walks, so it stops where the budget does.
 */
export function chargeDeep(value: unknown): void {
  if (typeof value === 'string') return chargeString(value);
  if (value === null || typeof value !== 'object') return;
  const stack: unknown[] = [value];
  while (stack.length) {
    const item = stack.pop();
    if (typeof item === 'string') {
      chargeString(item);
    } else if (Array.isArray(item)) {
      charge(item.length);
      for (const element of item) stack.push(element);
    } else if (item instanceof Map) {
      charge(item.size);
      for (const [key, element] of item) stack.push(key, element);
    } else if (isObject(item)) {
      const keys = Object.keys(item);
      charge(keys.length);
      for (const key of keys) {
        chargeString(key);
        stack.push(item[key]);
      }
    }
  }
}
