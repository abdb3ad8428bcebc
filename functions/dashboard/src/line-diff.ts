/** A line diff of two texts (longest common subsequence), for comparing a workflow's versions. Pure. */

export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
  /** The line's number in the old text (same, removed). */
  oldLine?: number;
  /** The line's number in the new text (same, added). */
  newLine?: number;
}

/** A run of changed lines with the unchanged lines around them; `skipped` unchanged lines come before it. */
export interface DiffHunk {
  skipped: number;
  lines: DiffLine[];
}

/** Beyond this many cells the middle is compared as one replaced block (definitions are far smaller). */
const MAX_CELLS = 4_000_000;

/** Every line of `after` and `before`, each same, added or removed, in reading order (removed first). */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // The common head and tail need no table.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const result: DiffLine[] = [];
  for (let i = 0; i < head; i++)
    result.push({ kind: 'same', text: a[i] as string, oldLine: i + 1, newLine: i + 1 });
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  result.push(...middle(midA, midB, head, head));
  for (let i = tail; i > 0; i--) {
    result.push({
      kind: 'same',
      text: a[a.length - i] as string,
      oldLine: a.length - i + 1,
      newLine: b.length - i + 1,
    });
  }
  return result;
}

function middle(a: string[], b: string[], offsetA: number, offsetB: number): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const removed = (i: number): DiffLine => ({
    kind: 'removed',
    text: a[i] as string,
    oldLine: offsetA + i + 1,
  });
  const added = (j: number): DiffLine => ({ kind: 'added', text: b[j] as string, newLine: offsetB + j + 1 });
  if (n * m > MAX_CELLS) return [...a.map((_, i) => removed(i)), ...b.map((_, j) => added(j))];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], row by row in one array.
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * width + j + 1] as number) + 1
          : Math.max(lcs[(i + 1) * width + j] as number, lcs[i * width + j + 1] as number);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      lines.push({ kind: 'same', text: a[i] as string, oldLine: offsetA + i + 1, newLine: offsetB + j + 1 });
      i++;
      j++;
    } else if ((lcs[(i + 1) * width + j] as number) >= (lcs[i * width + j + 1] as number)) {
      lines.push(removed(i++));
    } else {
      lines.push(added(j++));
    }
  }
  while (i < n) lines.push(removed(i++));
  while (j < m) lines.push(added(j++));
  return lines;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The changed lines with `context` unchanged lines either side, as a unified diff shows them. */
export function diffHunks(lines: readonly DiffLine[], context = 3): DiffHunk[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++)
      keep[k] = true;
  });
  const hunks: DiffHunk[] = [];
  let skipped = 0;
  let current: DiffHunk | undefined;
  lines.forEach((line, index) => {
    if (!keep[index]) {
      skipped++;
      current = undefined;
      return;
    }
    if (!current) {
      current = { skipped, lines: [] };
      hunks.push(current);
      skipped = 0;
    }
    current.lines.push(line);
  });
  return hunks;
}

/** How many lines were added and removed. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === 'added') added++;
    else if (line.kind === 'removed') removed++;
  }
  return { added, removed };
}

/** A definition as the text the diff compares: JSON, two spaces, keys in the order they were written. */
export function definitionText(definition: unknown): string {
  return `${JSON.stringify(definition, null, 2)}\n`;
}
