import { createHash } from 'node:crypto';

/** A book's text as published: a byte order mark and CRLF line endings are common (Project Gutenberg). */
export function normalizeText(raw: string): string {
  return raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

/**
 * The book's chapters: from each heading at the start of a line ("CHAPTER I.") to the next; the
 * last runs to the end of the file. Front matter (title, table of contents) is left out.
 */
export function splitChapters(text: string): { title: string; text: string }[] {
  const lines = normalizeText(text).split('\n');
  const starts = lines.flatMap((line, index) => (/^CHAPTER [IVXLC]+\./.test(line) ? [index] : []));
  return starts.map((start, n) => {
    const end = starts[n + 1] ?? lines.length;
    const heading = `${lines[start]} ${lines[start + 1] ?? ''}`.trim();
    return { title: heading, text: lines.slice(start, end).join('\n') };
  });
}

/** The title from the "Title:" line of the header, or the first line. */
export function bookTitle(text: string): string {
  const lines = normalizeText(text).split('\n');
  const titled = lines.find((line) => line.startsWith('Title:'));
  return (titled ? titled.slice('Title:'.length) : (lines[0] ?? '')).trim();
}

/** Whitespace-separated tokens, counted as written (case-sensitive). */
export function countWords(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of text.split(/\s+/)) {
    if (token) counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return counts;
}

/** A stable UUID for section `index` of a job, so a redelivered request writes the same files. */
export function sectionId(jobId: string, index: number): string {
  const hex = createHash('sha1').update(`${jobId}/${index}`).digest('hex');
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
