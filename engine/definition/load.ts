import { parseSource } from './parse-source.js';
import { type LoadResult, validateDocument } from './validate.js';

export interface LoadOptions {
  /** Named in every error. */
  file?: string;
  /** Accept a single workflow without the `workflows:` list around it. */
  allowBare?: boolean;
  /** Refuse definitions larger than this many bytes. @default 1 MiB */
  maxBytes?: number;
  /** The manager's reply queue, which no step may use. @default 'workflow-manager' */
  replyQueue?: string;
}

export const MAX_DEFINITION_BYTES = 1024 * 1024;

/** Loads workflow definitions from YAML or JSON text; errors name the file, line, workflow and step. */
export function loadWorkflows(text: string, options: LoadOptions = {}): LoadResult {
  const maxBytes = options.maxBytes ?? MAX_DEFINITION_BYTES;
  // A UTF-16 length can undercount bytes threefold; encode only when that could matter.
  const bytes = text.length * 3 > maxBytes ? new TextEncoder().encode(text).byteLength : text.length;
  if (bytes > maxBytes) {
    return {
      workflows: [],
      errors: [{ file: options.file, message: `the definition is larger than ${maxBytes} bytes` }],
    };
  }
  const source = parseSource(text, options.file);
  if (source.errors.length) return { workflows: [], errors: source.errors };
  return validateDocument(source.value, {
    file: options.file,
    lineOf: source.lineOf,
    allowBare: options.allowBare,
    replyQueue: options.replyQueue,
  });
}
