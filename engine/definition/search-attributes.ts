import { compileExpression } from '../expressions/compile.js';
import type { CompiledExpression } from '../expressions/expression.js';
import { describeJsonType, isJsonObject, type Json } from '../json.js';

/** A workflow declares at most this many search attributes (each is an index entry per job). */
export const MAX_SEARCH_ATTRIBUTES = 10;
/** An attribute's value is cut to this many characters before it is stored and indexed. */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 200;
/** Attribute names: letters, digits, `_` and `-`, starting with a letter; at most 64. */
export const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export interface CompiledSearchAttribute {
  name: string;
  /** `{"v": (<the attribute's expression>)}`: a map, so that the library's map kind evaluates it. */
  expression: CompiledExpression<'map'>;
}

function wrapped(source: string): string {
  return `{"v": (${source})}`;
}

/**
 * The problems of a workflow's `searchAttributes:` (a mapping of names to CEL expressions over the
 * job's `input`), each with the key it is about (undefined: the mapping itself); none when it is valid.
 */
export function searchAttributeProblems(raw: Json): { key?: string; message: string }[] {
  if (!isJsonObject(raw)) {
    return [
      {
        message: `"searchAttributes" must be a mapping of names to CEL expressions, e.g. { customer: input.customer }; got ${describeJsonType(raw)}`,
      },
    ];
  }
  const problems: { key?: string; message: string }[] = [];
  const names = Object.keys(raw);
  if (names.length > MAX_SEARCH_ATTRIBUTES) {
    problems.push({
      message: `"searchAttributes" declares ${names.length} attributes; a workflow may declare at most ${MAX_SEARCH_ATTRIBUTES}`,
    });
  }
  for (const name of names) {
    const source = raw[name];
    if (!ATTRIBUTE_NAME.test(name)) {
      problems.push({
        key: name,
        message: `search attribute name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, "_" and "-" (at most 64)`,
      });
      continue;
    }
    if (typeof source !== 'string' || source.trim() === '') {
      problems.push({
        key: name,
        message: `search attribute "${name}" must be a CEL expression (text) such as input.${name}, got ${describeJsonType(source ?? null)}`,
      });
      continue;
    }
    const compiled = compileExpression(wrapped(source), 'map');
    if (!compiled.ok) {
      problems.push({
        key: name,
        message: `search attribute "${name}" expression ${JSON.stringify(source)}: ${compiled.error}`,
      });
    }
  }
  return problems;
}

/** Compiles a validated `searchAttributes:` mapping. */
export function compileSearchAttributes(declared: Record<string, string>): CompiledSearchAttribute[] {
  return Object.entries(declared).map(([name, source]) => {
    const compiled = compileExpression(wrapped(source), 'map');
    if (!compiled.ok) throw new Error(`search attribute ${name}: ${compiled.error}`);
    return { name, expression: compiled.expression };
  });
}
