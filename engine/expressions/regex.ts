import { RE2JS, RE2JSException } from 're2js';
import { charge } from './budget.js';
import { estimateProgramSize } from './regex-size.js';

/**
 * The largest program a pattern may compile to, in RE2 instructions (estimated from its text before
 * compiling, `regex-size.ts`, and checked after): compiling one this large takes a few milliseconds.
 * Plain patterns stay far below it (an email pattern is ~130, a UUID ~40); `x{1000}` nears it.
 */
export const MAX_REGEX_PROGRAM = 5_000;

/**
 * A match is charged one unit per 16 pairs of (program instruction, input character): RE2 runs in
 * time linear in the input, times the program's size at worst (about 150 ns per pair, measured).
 */
const PAIRS_PER_UNIT = 16;

export type CompiledRegex = { ok: true; regex: RE2JS } | { ok: false; error: string };

/** Compiled patterns, by their text: a pattern from the data is compiled once, not per evaluation. */
const cache = new Map<string, CompiledRegex>();
const CACHE_SIZE = 256;
/** Longer patterns are compiled each time rather than kept (the cache holds at most ~0.5 MB of keys). */
const CACHED_PATTERN_LENGTH = 1_024;

/** Patterns whose compilation this evaluation was charged for (reset with the budget). */
const chargedThisEvaluation = new Set<string>();

export function resetRegexCharges(): void {
  if (chargedThisEvaluation.size) chargedThisEvaluation.clear();
}

/** Compiles an RE2 pattern, or says why RE2 refuses it (syntax, size). */
export function compileRegex(pattern: string): CompiledRegex {
  const cached = cache.get(pattern);
  if (cached) return cached;
  const compiled = compileUncached(pattern);
  if (pattern.length > CACHED_PATTERN_LENGTH) return compiled;
  // The oldest entry leaves first: enough for the few patterns a deployment's data carries.
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, compiled);
  return compiled;
}

function compileUncached(pattern: string): CompiledRegex {
  const tooLarge = `it compiles to more than ${MAX_REGEX_PROGRAM} instructions, the most a pattern may have`;
  if (estimateProgramSize(pattern) > MAX_REGEX_PROGRAM) return { ok: false, error: tooLarge };
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (error) {
    if (error instanceof RE2JSException) return { ok: false, error: error.message };
    throw error;
  }
  if (regex.programSize() > MAX_REGEX_PROGRAM) return { ok: false, error: tooLarge };
  return { ok: true, regex };
}

/** The message of a pattern RE2 refuses, for validation and for the step that fails. */
export function regexError(pattern: string, reason: string): string {
  const shown = pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern;
  return `matches(): RE2 refuses the pattern ${JSON.stringify(shown)}: ${reason}`;
}

/**
 * CEL's `text.matches(pattern)`: whether the pattern matches anywhere in the text, RE2 semantics,
 * in time linear in the text. `literal` is the pattern compiled at validation, when the expression
 * wrote it out; a pattern from the data is charged for its compilation once per evaluation.
 */
export function regexMatches(text: string, pattern: string, literal?: RE2JS): boolean {
  let regex = literal;
  if (!regex) {
    if (!chargedThisEvaluation.has(pattern)) {
      charge(Math.min(estimateProgramSize(pattern), MAX_REGEX_PROGRAM));
      chargedThisEvaluation.add(pattern);
    }
    const compiled = compileRegex(pattern);
    if (!compiled.ok) throw new Error(regexError(pattern, compiled.error));
    regex = compiled.regex;
  }
  charge(Math.ceil((regex.programSize() * (text.length + 1)) / PAIRS_PER_UNIT));
  return regex.test(text);
}
