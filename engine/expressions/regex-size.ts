/** A Unicode class (`\pL`, `[\p{Greek}]`) compiles to many UTF-8 ranges: it counts for this many. */
const UNICODE_CLASS_SIZE = 16;
const CAP = 1e9;

interface Frame {
  /** Size of the group so far, all its alternatives together. */
  total: number;
  /** Size of the last atom, which a repetition multiplies. */
  last: number;
}

/**
 * About how many instructions RE2 compiles `pattern` to, read from its text before compiling it:
 * RE2 expands a counted repetition (`x{1000}`) into copies, so a pattern of 100 characters can
 * compile to 100,000 instructions, and compiling takes time in proportion (re2js: about 100 ms).
 * Each character, class or escape counts 1 (a Unicode class 16), a group 2 more than its contents,
 * `{n,m}` multiplies what it repeats by m (`{n,}` by n + 1). An overestimate is fine: it only has
 * to keep large programs from being compiled at all. Text that is not a valid pattern still gets a
 * number; RE2 then says what is wrong with it.
 */
export function estimateProgramSize(pattern: string): number {
  const stack: Frame[] = [{ total: 0, last: 0 }];
  let top = stack[0] as Frame;
  const atom = (size: number) => {
    top.total = Math.min(CAP, top.total + size);
    top.last = size;
  };
  const repeat = (times: number) => {
    top.total = Math.min(CAP, top.total + top.last * (times - 1));
    top.last = Math.min(CAP, top.last * times);
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'p' || next === 'P') {
        i = pattern[i + 2] === '{' ? closing(pattern, i + 2, '}') : i + 2;
        atom(UNICODE_CLASS_SIZE);
      } else if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const text = end === -1 ? pattern.length - i - 2 : end - i - 2;
        i = end === -1 ? pattern.length : end + 1;
        atom(text);
      } else {
        i++;
        atom(1);
      }
    } else if (c === '[') {
      const end = classEnd(pattern, i);
      atom(/\\[pP]|\[:/.test(pattern.slice(i, end + 1)) ? UNICODE_CLASS_SIZE : 1);
      i = end;
    } else if (c === '(') {
      const flagsOnly = /^\(\?[imsU-]*\)/.exec(pattern.slice(i, i + 12));
      if (flagsOnly) {
        i += flagsOnly[0].length - 1;
        continue;
      }
      top = { total: 0, last: 0 };
      stack.push(top);
    } else if (c === ')' && stack.length > 1) {
      const inner = stack.pop() as Frame;
      top = stack[stack.length - 1] as Frame;
      atom(inner.total + 2);
    } else if (c === '|') {
      top.total += 1;
      top.last = 0;
    } else if (c === '*' || c === '+' || c === '?') {
      top.total += 1;
    } else if (c === '{') {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 16));
      if (!counted) {
        atom(1);
        continue;
      }
      const least = Number(counted[1]);
      const most = counted[2] === undefined ? least : counted[3] ? Number(counted[3]) : least + 1;
      repeat(Math.max(1, most));
      i += counted[0].length - 1;
    } else {
      atom(1);
    }
  }
  let size = 0;
  for (const frame of stack) size = Math.min(CAP, size + frame.total);
  return size;
}

/** The index of the `close` that ends what opens at `start` (the text's end if nothing does). */
function closing(pattern: string, start: number, close: string): number {
  const end = pattern.indexOf(close, start);
  return end === -1 ? pattern.length : end;
}

/** The index of the `]` that closes the class opened at `start`: a `]` first in it is a literal. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[' && pattern[i + 1] === ':') i = closing(pattern, i + 2, ':]') + 1;
    else if (c === ']') return i;
  }
  return pattern.length;
}
