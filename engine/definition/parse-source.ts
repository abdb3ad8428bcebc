import { isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { type Json, type JsonObject, setOwn } from '../json.js';
import type { DefinitionError } from './types.js';

export type Path = readonly (string | number)[];

/** A parsed YAML or JSON document with the line each value (and each key) came from. */
export interface ParsedSource {
  value: Json | undefined;
  /** 1-based line of the value at `path`, or of the key `path` ends with when `key` is set. */
  lineOf(path: Path, key?: boolean): number | undefined;
  errors: DefinitionError[];
}

const pathKey = (path: Path): string => JSON.stringify(path);

/** Deeper nesting than any workflow needs; the YAML parser recurses and would exhaust the stack. */
export const MAX_NESTING = 64;
/** Aliases resolved in one document (the yaml package's own default): an alias bomb stops here. */
export const MAX_ALIASES = 100;
/** Values in one document once aliases are expanded. */
export const MAX_VALUES = 200_000;

/**
 * How deep flow collections (`[`, `{`) nest, and how far a line is indented: a cheap scan before
 * parsing, so that a hostile document is refused before the recursive parser meets it.
 */
function nestingOf(text: string): { flow: number; indent: number } {
  let depth = 0;
  let flow = 0;
  let indent = 0;
  let quote: string | undefined;
  let lineStart = true;
  let lineIndent = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\n') {
      lineStart = true;
      lineIndent = 0;
      if (quote === "'") quote = undefined;
      continue;
    }
    if (lineStart) {
      if (char === ' ' || char === '\t' || char === '-') {
        lineIndent++;
        indent = Math.max(indent, lineIndent);
        continue;
      }
      lineStart = false;
    }
    if (quote) {
      if (char === '\\' && quote === '"') i++;
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'") quote = char;
    else if (char === '#' && (i === 0 || text[i - 1] === ' ')) {
      while (i < text.length && text[i] !== '\n') i++;
      i--;
    } else if (char === '[' || char === '{') flow = Math.max(flow, ++depth);
    else if (char === ']' || char === '}') depth = Math.max(0, depth - 1);
  }
  return { flow, indent };
}

/** Parses YAML (JSON is YAML too) without ever assigning to an object's prototype. */
export function parseSource(text: string, file?: string): ParsedSource {
  const nesting = nestingOf(text);
  if (nesting.flow > MAX_NESTING || nesting.indent > MAX_NESTING * 4) {
    return {
      value: undefined,
      lineOf: () => undefined,
      errors: [
        { file, message: `the document nests deeper than ${MAX_NESTING} levels; no workflow needs that` },
      ],
    };
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text.replace(/^\uFEFF/, ''), {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: true,
  });
  const valueLines = new Map<string, number>();
  const keyLines = new Map<string, number>();
  const lineAt = (node: Node | null | undefined): number | undefined =>
    node?.range ? lineCounter.linePos(node.range[0]).line : undefined;

  const errors: DefinitionError[] = document.errors.map((error) => ({
    file,
    line: error.linePos?.[0].line,
    message: `not valid YAML or JSON: ${(error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
  }));

  const seen = new Set<Node>();
  let aliases = 0;
  let values = 0;
  const convert = (node: unknown, path: (string | number)[]): Json => {
    if (isAlias(node) && ++aliases > MAX_ALIASES) {
      throw new Error(`more than ${MAX_ALIASES} aliases (*name); a workflow needs far fewer`);
    }
    if (++values > MAX_VALUES) throw new Error(`more than ${MAX_VALUES} values once aliases are expanded`);
    const resolved = isAlias(node) ? (node.resolve(document) as unknown) : node;
    if (resolved && typeof resolved === 'object') {
      const line = lineAt(resolved as Node);
      if (line !== undefined) valueLines.set(pathKey(path), line);
    }
    if (isScalar(resolved)) {
      const value = resolved.value;
      if (value === undefined || value === null) return null;
      if (typeof value === 'bigint') return Number(value);
      if (value instanceof Date) return value.toISOString();
      return value as Json;
    }
    if (isSeq(resolved)) {
      if (seen.has(resolved)) throw new Error('recursive alias');
      seen.add(resolved);
      const list = resolved.items.map((item, index) => convert(item, [...path, index]));
      seen.delete(resolved);
      return list;
    }
    if (isMap(resolved)) {
      if (seen.has(resolved)) throw new Error('recursive alias');
      seen.add(resolved);
      const object: JsonObject = {};
      for (const pair of resolved.items) {
        const keyNode = pair.key as Node | null;
        const key = String(isScalar(keyNode) ? keyNode.value : keyNode);
        const keyLine = lineAt(keyNode);
        if (keyLine !== undefined) keyLines.set(pathKey([...path, key]), keyLine);
        setOwn(object, key, convert(pair.value, [...path, key]));
      }
      seen.delete(resolved);
      return object;
    }
    return null;
  };

  let value: Json | undefined;
  if (errors.length === 0) {
    try {
      value = document.contents === null ? undefined : convert(document.contents, []);
    } catch (error) {
      errors.push({ file, message: `not valid YAML or JSON: ${(error as Error).message}` });
    }
  }
  return {
    value,
    errors,
    lineOf: (path, key) => (key ? keyLines.get(pathKey(path)) : undefined) ?? valueLines.get(pathKey(path)),
  };
}
