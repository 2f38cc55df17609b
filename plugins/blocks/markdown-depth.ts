/**
 * How deeply a Markdown text nests, estimated before it is parsed. remark's parser nests a container
 * (a quote, a list item, a footnote definition) inside another without bound: 3,000 nested quotes
 * overflow the stack of the conversion after it, 3,000 nested list markers take seconds, and a few
 * kilobytes hold that many. This scan is linear and never recurses; text nested past its limit is
 * refused without being parsed. The blocks a parse makes are then measured exactly (block-depth.ts),
 * so the estimate only has to bound what the parser is given, and is given room for its errors.
 */
import { opener } from './markdown-in.js';

/** An open container: a quote or a footnote definition is one level, a list item two (the list and the item). */
interface Container {
  levels: 1 | 2;
  /** A `>` continues a quote; so many columns of indentation continue a list item or a footnote. */
  quote: boolean;
  width: number;
}

export interface Nesting {
  /** The estimated depth of the deepest block, the document's children being at 1. */
  depth: number;
  /** The line (from 1) where it is reached. */
  line: number;
}

/** Where the characters of a line are read from, and at which column (tabs stop every 4). */
interface Cursor { pos: number; col: number }

const LIST_MARKER = /(?:[-+*]|\d{1,9}[.)])(?=[ \t\r]|$)/y;
const FOOTNOTE = /\[\^[^\]\s]{1,999}\]:(?=[ \t\r]|$)/y;

/**
 * The deepest nesting of blocks in `src` by its container markers and the indentation that keeps
 * list items open, the way CommonMark continues containers from line to line. Stops at the first
 * line past `limit`. Fenced code and HTML blocks open nothing inside them. Exact on ordinary outlines;
 * high where the parser declines a marker it counts (an ordered list not starting at 1 where only 1
 * may start one), and possibly off where tabs mix with spaces in an indentation.
 */
export function estimateNesting(src: string, limit: number): Nesting {
  const stack: Container[] = [];
  /** levels[k]: the levels of the first k containers on the stack. */
  const levels = [0];
  let fence: ((line: string) => boolean) | undefined;
  let lazy = false;
  let deepest: Nesting = { depth: 0, line: 1 };
  for (let at = 0, n = 0; at <= src.length; n++) {
    let end = src.indexOf('\n', at);
    if (end === -1) end = src.length;
    const line = src.slice(at, end);
    at = end + 1;
    const cursor: Cursor = { pos: 0, col: 0 };
    const lastText = lastNonBlank(line);
    let matched = 0;
    // A blank line continues the list items up to the first quote (the common case, made cheap).
    if (lastText < 0) while (matched < stack.length && !stack[matched]!.quote) matched++;
    else while (matched < stack.length && continues(line, cursor, stack[matched]!, lastText)) matched++;
    if (fence) {
      if (matched === stack.length) {
        if (fence(line.slice(cursor.pos))) fence = undefined;
        lazy = false;
        continue;
      }
      fence = undefined;
    }
    const opened = openContainers(line, cursor, limit - levels[matched]!, lastText);
    const blank = lastText < cursor.pos;
    // A lazy line continues the paragraph inside every open container, whatever markers it lacks.
    if (opened.length > 0 || matched === stack.length || !lazy || blank) {
      // Popped rather than cut by assigning length, which is several times slower in V8.
      while (stack.length > matched) stack.pop();
      while (levels.length > matched + 1) levels.pop();
      for (const container of opened) {
        stack.push(container);
        levels.push(levels[levels.length - 1]! + container.levels);
      }
    }
    const depth = levels[stack.length]! + (blank ? 0 : 1);
    if (depth > deepest.depth) deepest = { depth, line: n + 1 };
    if (depth > limit) return deepest;
    fence = blank ? undefined : opener(line.slice(cursor.pos));
    lazy = !blank && !fence;
  }
  return deepest;
}

/** Whether `line` continues `container`, moving the cursor past its marker or indentation. */
function continues(line: string, cursor: Cursor, container: Container, lastText: number): boolean {
  const indent = indentation(line, cursor);
  if (container.quote) {
    if (indent.cols > 3 || line.charCodeAt(indent.pos) !== 62 /* > */) return false;
    cursor.pos = indent.pos + 1;
    cursor.col += indent.cols + 1;
    skipOneSpace(line, cursor);
    return true;
  }
  // Blank lines continue a list item (a loose list); anything else needs its indentation.
  if (lastText < cursor.pos) return true;
  if (indent.cols < container.width) return false;
  advance(line, cursor, container.width);
  return true;
}

/** The containers a line opens after those it continues; no more than `room` levels of them. */
function openContainers(line: string, cursor: Cursor, room: number, lastText: number): Container[] {
  const opened: Container[] = [];
  let breakAt: ((pos: number) => boolean) | undefined;
  for (let used = 0; used <= room;) {
    const indent = indentation(line, cursor);
    // Four columns or more: indented code or text, which opens nothing.
    if (indent.cols > 3 || indent.pos > lastText) break;
    const start = cursor.col;
    cursor.pos = indent.pos;
    cursor.col += indent.cols;
    if (line.charCodeAt(cursor.pos) === 62 /* > */) {
      cursor.pos++;
      cursor.col++;
      skipOneSpace(line, cursor);
      opened.push(QUOTE);
      used += 1;
      continue;
    }
    const first = line.charCodeAt(cursor.pos);
    const footnote = first === 91 /* [ */ ? sticky(FOOTNOTE, line, cursor.pos) : undefined;
    const list = footnote === undefined && (first === 45 || first === 43 || first === 42 || (first >= 48 && first <= 57)) ? sticky(LIST_MARKER, line, cursor.pos) : undefined;
    const marker = footnote ?? list;
    if (marker === undefined || (list !== undefined && (breakAt ??= thematicBreaks(line, lastText))(cursor.pos))) break;
    // Content begins after 1 to 4 spaces; with more (indented code) or none (an empty item), after 1.
    let spaces = 0;
    while (spaces < 5 && line.charCodeAt(cursor.pos + marker + spaces) === 32) spaces++;
    const gap = lastText < cursor.pos + marker || spaces === 0 || spaces > 4 ? 1 : spaces;
    advance(line, cursor, marker + gap);
    // A footnote definition's later lines are indented by four columns, whatever its label.
    opened.push(footnote !== undefined ? { levels: 1, quote: false, width: 4 } : { levels: 2, quote: false, width: cursor.col - start });
    used += footnote !== undefined ? 1 : 2;
  }
  return opened;
}

const QUOTE: Container = { levels: 1, quote: true, width: 0 };

function sticky(pattern: RegExp, line: string, pos: number): number | undefined {
  pattern.lastIndex = pos;
  const match = pattern.exec(line);
  return match ? match[0].length : undefined;
}

/**
 * Where on this line a `-` or `*` starts a thematic break (`- - -`, `***`) rather than a list item:
 * from a position in the line's closing run of that character and blanks, with three of it still
 * to come. Worked out once per line, from its end, so a line of many markers is read once.
 */
function thematicBreaks(line: string, lastText: number): (pos: number) => boolean {
  const char = line.charCodeAt(lastText);
  if (char !== 45 && char !== 42) return () => false;
  let from = lastText;
  let count = 0;
  let third = -1;
  for (let i = lastText; i >= 0; i--) {
    const c = line.charCodeAt(i);
    if (c === char && ++count === 3) third = i;
    else if (c !== char && c !== 32 && c !== 9) break;
    from = i;
  }
  return (pos) => line.charCodeAt(pos) === char && pos >= from && pos <= third;
}

function indentation(line: string, cursor: Cursor): { cols: number; pos: number } {
  let pos = cursor.pos;
  let col = cursor.col;
  for (let c = line.charCodeAt(pos); c === 32 || c === 9; c = line.charCodeAt(++pos)) col = c === 9 ? col + 4 - (col % 4) : col + 1;
  return { cols: col - cursor.col, pos };
}

/** Moves the cursor `cols` columns on over spaces and tabs (a tab counts whole). */
function advance(line: string, cursor: Cursor, cols: number): void {
  const target = cursor.col + cols;
  while (cursor.col < target) {
    const c = line.charCodeAt(cursor.pos);
    if (c === 32) cursor.col++;
    else if (c === 9) cursor.col += 4 - (cursor.col % 4);
    else if (cursor.pos < line.length && c !== 13) cursor.col++;
    else break;
    cursor.pos++;
  }
}

function skipOneSpace(line: string, cursor: Cursor): void {
  const c = line.charCodeAt(cursor.pos);
  if (c === 32 || c === 9) {
    cursor.pos++;
    cursor.col++;
  }
}

/** The index of the last character that is not a space, tab or carriage return; -1 for a blank line. */
function lastNonBlank(line: string): number {
  let i = line.length - 1;
  while (i >= 0 && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9 || line.charCodeAt(i) === 13)) i--;
  return i;
}
