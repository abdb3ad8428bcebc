import { readFile } from 'node:fs/promises';

/**
 * A fenced block of a Markdown page marked runnable by the HTML comment just before it:
 *
 *     <!-- runnable: SCENARIO [SCENARIO…] [file=PATH] -->
 *
 * A shell block (`sh`) is run; any other block is written to `file` first. The blocks of one
 * scenario, in the page's order, make one bash script.
 */
export interface RunnableBlock {
  page: string;
  /** The line of the marker, 1-based. */
  line: number;
  scenarios: string[];
  /** Where the block is written (relative to the script's folder at that point); shell blocks run. */
  file?: string;
  language: string;
  code: string;
}

const MARKED_BLOCK = /<!--\s*runnable:([^>]*?)-->[ \t]*\n```([\w-]*)[^\n]*\n([\s\S]*?)\n```/g;

/** The runnable blocks of a page, in its order. */
export async function runnableBlocks(path: string, page = path): Promise<RunnableBlock[]> {
  const text = await readFile(path, 'utf8');
  return [...text.matchAll(MARKED_BLOCK)].map((match) => {
    const words = (match[1] ?? '').trim().split(/\s+/);
    const file = words.find((word) => word.startsWith('file='))?.slice('file='.length);
    return {
      page,
      line: text.slice(0, match.index).split('\n').length,
      scenarios: words.filter((word) => !word.includes('=')),
      ...(file ? { file } : {}),
      language: match[2] ?? '',
      code: match[3] ?? '',
    };
  });
}

/** The bash script of a scenario: its shell blocks as they are, its other blocks written to their files. */
export function scenarioScript(blocks: readonly RunnableBlock[]): string {
  const parts = blocks.map((block) => {
    const where = `# ${block.page}:${block.line}`;
    if (block.file === undefined) {
      if (block.language !== 'sh' && block.language !== 'bash')
        throw new Error(`${block.page}:${block.line}: a runnable ${block.language} block needs file=PATH`);
      return `${where}\n${block.code}`;
    }
    if (block.code.includes('\nRUNNABLE_DOC_EOF\n'))
      throw new Error(`${block.page}:${block.line}: the block holds the script's own end marker`);
    return `${where}\ncat > '${block.file}' <<'RUNNABLE_DOC_EOF'\n${block.code}\nRUNNABLE_DOC_EOF`;
  });
  return `set -euo pipefail\n${parts.join('\n')}\n`;
}
