import { KernelError } from '../errors.js';
import { copyPrefix, deepFreeze, jsonEqual } from './json-values.js';
import type { SessionEntry } from './session-types.js';

/**
 * What a journal keeps: a list of entries that grows at its end, a revision, and other fields. A
 * session's history is one (session.json); the turn being produced is another (runtime.json, whose
 * entries are the turn's messages: runtime-files.ts).
 */
export interface JournalDocument {
  entries: SessionEntry[];
  revision: number;
  [key: string]: unknown;
}

/**
 * One save as a line of `session.journal.jsonl`: what changed from the revision before it. The first
 * `keep` entries stay, `entries` follow them; the fields in `set` take those values and the fields in
 * `unset` go. A turn's saves add a few entries to a long history, so a line is the size of the turn,
 * not of the session.
 *
 * Version 2 adds `keepCalls`: the first of `entries` replaces entry `keep` but carries only its tool
 * calls after the first `keepCalls` of that entry, which stay. A round's calls finish one at a time,
 * and each checkpoint then carries the call that changed, not the round again (a round of 64 calls
 * with long results wrote the square of its size). A kernel that knows version 1 only refuses such a
 * line instead of reading it wrong.
 */
export interface JournalLine {
  v: 1 | 2;
  revision: number;
  keep: number;
  entries: SessionEntry[];
  set: Record<string, unknown>;
  unset: string[];
  keepCalls?: number;
}

/** Fields a line carries in its own way (the id never changes). */
const OWN_FIELDS: ReadonlySet<string> = new Set(['id', 'entries', 'revision']);

/**
 * How many leading entries `next` shares with `stored`: the same object (the usual case, a caller
 * that appended to what it read) or, for a body that arrived as JSON, the same value.
 */
function sharedPrefix(stored: readonly SessionEntry[], next: readonly SessionEntry[]): number {
  const length = Math.min(stored.length, next.length);
  let i = 0;
  while (i < length && stored[i] === next[i]) i++;
  while (i < length && jsonEqual(stored[i], next[i])) i++;
  return i;
}

/** How many leading tool calls of an entry that changed stay as they were (at most all but its last, which changed). */
function sharedCalls(stored: SessionEntry | undefined, next: SessionEntry | undefined): number {
  const before = stored?.toolCalls;
  const after = next?.toolCalls;
  if (!Array.isArray(before) || !Array.isArray(after)) return 0;
  const length = Math.min(before.length, after.length);
  let i = 0;
  while (i < length && (before[i] === after[i] || jsonEqual(before[i], after[i]))) i++;
  return i;
}

/** The line that turns `stored` into `next` (whose revision is the next one). */
export function diffLine(stored: JournalDocument, next: JournalDocument): JournalLine {
  const keep = sharedPrefix(stored.entries, next.entries);
  const entries = next.entries.slice(keep);
  const keepCalls = sharedCalls(stored.entries[keep], next.entries[keep]);
  if (keepCalls > 0) entries[0] = { ...entries[0]!, toolCalls: entries[0]!.toolCalls!.slice(keepCalls) };
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  for (const [key, value] of Object.entries(next)) {
    if (OWN_FIELDS.has(key) || value === undefined) continue;
    if (stored[key] === undefined || (stored[key] !== value && !jsonEqual(stored[key], value))) set[key] = value;
  }
  for (const key of Object.keys(stored)) if (!OWN_FIELDS.has(key) && stored[key] !== undefined && next[key] === undefined) unset.push(key);
  return keepCalls > 0 ? { v: 2, revision: next.revision, keep, entries, set, unset, keepCalls } : { v: 1, revision: next.revision, keep, entries, set, unset };
}

/**
 * The entries a line brings, whole: a first entry that keeps calls of the one it replaces gets them
 * back. `undefined` when the line keeps calls that entry does not have (damage: the caller says where).
 */
function entriesOfLine(line: JournalLine, replaced: SessionEntry | undefined): SessionEntry[] | undefined {
  const keepCalls = line.keepCalls ?? 0;
  if (keepCalls === 0) return line.entries;
  const first = line.entries[0];
  const kept = replaced?.toolCalls;
  if (!first || !Array.isArray(first.toolCalls) || !Array.isArray(kept) || kept.length < keepCalls) return undefined;
  return [{ ...first, toolCalls: [...kept.slice(0, keepCalls), ...first.toolCalls] }, ...line.entries.slice(1)];
}

/**
 * `doc` with `line` applied, as a new frozen document (`doc` is not changed; its entries are shared).
 * The line must come from JSON (a parsed line), so that the document holds what a reload would read;
 * `given` (the entries the line was made from) may name entries to hold instead: those the caller
 * froze (deepFreeze) cannot change, and held as they are, the next save finds them by identity
 * instead of comparing them (a turn's checkpoints pass all its rounds each time).
 */
export function applyLine<D extends JournalDocument>(doc: D, line: JournalLine, given?: readonly SessionEntry[]): D {
  const entries = copyPrefix(doc.entries, line.keep);
  const brought = entriesOfLine(line, doc.entries[line.keep]);
  if (!brought) throw new KernelError('INTERNAL', `a journal line keeps ${line.keepCalls} calls of an entry that has fewer`);
  for (const entry of brought) entries.push(deepFreeze(entry));
  if (given) {
    for (let i = 0; i < entries.length; i++) if (given[i] !== entries[i] && Object.isFrozen(given[i])) entries[i] = given[i]!;
  }
  const next: Record<string, unknown> = { ...doc, ...deepFreeze(line.set), entries: Object.freeze(entries), revision: line.revision };
  for (const key of line.unset) delete next[key];
  // Only what the line brought is walked: the rest of `doc` is frozen already.
  return Object.freeze(next) as D;
}

/** What replaying a journal gave: the document, and where its last complete line ends (the next line goes there). */
export interface Replay<D extends JournalDocument> {
  doc: D;
  end: number;
  /** Lines applied (those a fold had already written into session.json are skipped). */
  applied: number;
}

/** `whole`: the file the journal's lines are folded into (session.json, runtime.json). */
function damaged(file: string, whole: string, lineNumber: number, why: string): KernelError {
  return new KernelError('WORKSPACE_INVALID', `${file}, line ${lineNumber}: ${why}; the journal and ${whole} were left as they are (remove the journal to keep ${whole} as it is)`, { details: { file, line: lineNumber } });
}

function parseLine(text: string, file: string, whole: string, lineNumber: number): JournalLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw damaged(file, whole, lineNumber, 'not valid JSON');
  }
  const line = value as Partial<JournalLine> | null;
  const valid = typeof line === 'object' && line !== null && (line.v === 1 || line.v === 2) && Number.isInteger(line.revision) && Number.isInteger(line.keep) && line.keep! >= 0
    && Array.isArray(line.entries) && typeof line.set === 'object' && line.set !== null && !Array.isArray(line.set) && Array.isArray(line.unset)
    && (line.keepCalls === undefined || (line.v === 2 && Number.isInteger(line.keepCalls) && line.keepCalls >= 0));
  if (!valid) throw damaged(file, whole, lineNumber, 'not a journal line');
  return line as JournalLine;
}

/**
 * Applies the journal's complete lines to `base` (the whole file, `whole`: session.json) in order. A line at or below the base's
 * revision was folded into it already and is skipped; the text after the last newline is a line a crash
 * cut short: never acknowledged, so it is ignored. A complete line that does not parse, or does not
 * follow the revision before it, is damage from outside: an error, nothing is written.
 */
export function replayJournal<D extends JournalDocument>(base: D, data: Buffer, file: string, whole = 'session.json'): Replay<D> {
  const entries = [...base.entries];
  const fields: Record<string, unknown> = { ...base };
  let revision = base.revision;
  let start = 0;
  let applied = 0;
  for (let lineNumber = 1; ; lineNumber++) {
    const newline = data.indexOf(10, start);
    if (newline < 0) break;
    const line = parseLine(data.toString('utf8', start, newline), file, whole, lineNumber);
    start = newline + 1;
    if (line.revision <= revision) continue;
    if (line.revision !== revision + 1) throw damaged(file, whole, lineNumber, `revision ${line.revision} does not follow revision ${revision}`);
    if (line.keep > entries.length) throw damaged(file, whole, lineNumber, `it keeps ${line.keep} entries of ${entries.length}`);
    const brought = entriesOfLine(line, entries[line.keep]);
    if (!brought) throw damaged(file, whole, lineNumber, `it keeps ${line.keepCalls} tool calls of an entry that has fewer`);
    entries.length = line.keep;
    for (const entry of brought) entries.push(entry);
    for (const [key, value] of Object.entries(line.set)) define(fields, key, value);
    for (const key of line.unset) delete fields[key];
    revision = line.revision;
    applied++;
  }
  return { doc: deepFreeze({ ...fields, entries, revision } as D), end: start, applied };
}

/** Sets a field as an own property, whatever its name (`__proto__` included, as JSON.parse makes it). */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
