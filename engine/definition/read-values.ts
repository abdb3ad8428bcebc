import { compileExpression } from '../expressions/compile.js';
import type { ExpressionKind } from '../expressions/expression.js';
import { describeJsonType, isJsonObject, type JsonObject } from '../json.js';
import { closest } from './closest.js';
import { parseDuration } from './duration.js';
import { NAME_PATTERN } from './names.js';
import type { Path } from './parse-source.js';
import { secretProblems } from './secrets.js';
import type { Report, Scope } from './validation-report.js';

// The value readers of the workflow format's validation (validate.ts): names, strings, params,
// expressions, durations and the keys of each level.

export function readName(
  raw: JsonObject,
  path: Path,
  scope: Scope,
  what: string,
  report: Report,
): string | undefined {
  const name = raw.name;
  if (name === undefined || name === null) {
    report(path, scope, `a ${what} needs a "name"`);
    return undefined;
  }
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    report(
      [...path, 'name'],
      scope,
      `${what} name ${JSON.stringify(name)} is not valid: use a letter, then letters, digits, "_" or "-"`,
    );
    return undefined;
  }
  return name;
}

export function readString(
  raw: JsonObject,
  key: string,
  path: Path,
  scope: Scope,
  report: Report,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    report([...path, key], scope, `"${key}" must be text, got ${describeJsonType(value)}`);
    return undefined;
  }
  return value;
}

export function readParams(
  raw: JsonObject,
  path: Path,
  scope: Scope,
  report: Report,
): JsonObject | undefined {
  const value = raw.params;
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) {
    report(
      [...path, 'params'],
      scope,
      `"params" must be a mapping of default values, e.g. { currency: EUR }; got ${describeJsonType(value)}`,
    );
    return undefined;
  }
  const problems = secretProblems(value);
  for (const problem of problems) report([...path, 'params'], scope, problem);
  if (problems.length) return undefined;
  return Object.keys(value).length ? value : undefined;
}

/** A CEL expression, parsed and checked now so that a mistake shows at validation, not in a job. */
export function readExpression(
  raw: JsonObject,
  key: string,
  kind: ExpressionKind,
  path: Path,
  scope: Scope,
  report: Report,
  seesOutput = false,
): string | undefined {
  const value = raw[key];
  // `sleep.until`, `fail.message`: named with the key they are under.
  const under = path[path.length - 1];
  const label = typeof under === 'string' ? `${under}.${key}` : key;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean' && key === 'when') {
    report([...path, key], scope, `"when" must be a CEL expression; write it in quotes, e.g. "${value}"`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    report(
      [...path, key],
      scope,
      `"${label}" must be a CEL expression (text), got ${describeJsonType(value)}`,
    );
    return undefined;
  }
  const compiled = compileExpression(value, kind);
  if (compiled.ok && compiled.expression.uses.has('output') && !seesOutput) {
    report(
      [...path, key],
      scope,
      `"${label}" expression ${JSON.stringify(value)}: \`output\` is only seen by "output:" and "repeat.until"`,
    );
    return undefined;
  }
  if (compiled.ok) return value;
  const position = compiled.position;
  const at = !position
    ? ''
    : value.includes('\n')
      ? ` (line ${position.line}, column ${position.column} of the expression)`
      : ` (column ${position.column})`;
  report([...path, key], scope, `"${label}" expression ${JSON.stringify(value)}${at}: ${compiled.error}`);
  return undefined;
}

export function readDuration(
  raw: JsonObject,
  key: string,
  path: Path,
  scope: Scope,
  report: Report,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms <= 0) {
    report(
      [...path, key],
      scope,
      `"${key}" must be a duration such as "30s", "5m" or "1h30m", got ${JSON.stringify(value)}`,
    );
    return undefined;
  }
  return (value as string).trim();
}

export function checkKeys(
  raw: JsonObject,
  path: Path,
  known: readonly string[],
  scope: Scope,
  what: string,
  report: Report,
): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const suggestion = closest(key, known);
    report(
      [...path, key],
      scope,
      `unknown ${what} key "${key}"${suggestion ? `: did you mean "${suggestion}"?` : ` (known keys: ${known.join(', ')})`}`,
      true,
    );
  }
}
