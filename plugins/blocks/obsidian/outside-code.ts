/**
 * Rewrites the prose of a Markdown note and leaves its code alone: fenced code blocks (``` and ~~~),
 * `$$` math blocks and inline code spans pass through byte for byte, so a `[[link]]` or `#tag` shown
 * as code stays code. Works line by line, as Obsidian's own link and tag scanners do.
 */
export function mapOutsideCode(text: string, rewrite: (prose: string, context: { lineStart: boolean; wholeLine: boolean }) => string): string {
  const lines = text.split('\n');
  let fence: { char: string; length: number } | undefined;
  let math = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const bare = line.replace(/^(?:[ \t]*>)*[ \t]*/, '');
    if (fence) {
      const close = /^(`{3,}|~{3,})[ \t]*$/.exec(bare);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = undefined;
      continue;
    }
    if (math) {
      if (bare.trimEnd().endsWith('$$')) math = false;
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(bare);
    if (open) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      continue;
    }
    if (bare.startsWith('$$')) {
      if (!(bare.length > 2 && bare.trimEnd().endsWith('$$') && bare.trimEnd().length > 3)) math = true;
      continue;
    }
    lines[i] = mapLine(line, rewrite);
  }
  return lines.join('\n');
}

/** One line: the spans between inline code spans are rewritten; a code span is `n` backticks to the next run of exactly `n`. */
function mapLine(line: string, rewrite: (prose: string, context: { lineStart: boolean; wholeLine: boolean }) => string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < line.length) {
    if (line[i] !== '`') { i++; continue; }
    let run = 1;
    while (line[i + run] === '`') run++;
    const close = findRun(line, i + run, run);
    if (close === -1) { i += run; continue; }
    out += rewrite(line.slice(from, i), { lineStart: from === 0, wholeLine: false }) + line.slice(i, close + run);
    from = i = close + run;
  }
  const rest = line.slice(from);
  return out + rewrite(rest, { lineStart: from === 0, wholeLine: from === 0 });
}

function findRun(line: string, from: number, length: number): number {
  for (let i = from; i < line.length; i++) {
    if (line[i] !== '`') continue;
    let run = 1;
    while (line[i + run] === '`') run++;
    if (run === length) return i;
    i += run - 1;
  }
  return -1;
}
