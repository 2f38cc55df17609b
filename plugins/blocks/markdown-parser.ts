import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { WorkerPool } from '../../core/index.js';
import type { DraftBlock } from './block-model.js';
import { MAX_BLOCK_DEPTH, treeHeight } from './block-depth.js';
import { estimateNesting } from './markdown-depth.js';
import { markdownToBlocks } from './markdown-in.js';
import { readFrontMatter } from './obsidian/front-matter.js';
import { decodeNoteText } from './note-text.js';
import { prepareImport, type ImportWork, type PreparedDocument } from './import-rows.js';
import { prepareRebuild, type RebuildDocWork, type RebuiltDocument } from './rebuild-rows.js';

/** `attrs`: a file's front matter (parseMarkdownFile). */
/** `note`: what was read otherwise than as written (front matter that does not parse, kept as text). */
export type ParsedFile = { ok: true; drafts: DraftBlock[]; attrs?: Record<string, string>; note?: string } | { ok: false; reason: string };
/** A call's Markdown as drafts, or how deep it would nest (and where, when refused before the parse). */
export type ParsedText = { ok: true; drafts: DraftBlock[] } | { ok: false; depth: number; line?: number };
export type ParseWork = { markdown: string } | { prepare: ImportWork } | { rebuild: RebuildDocWork[] };
export type ParseRequest = ParseWork & { id: number };
export type ParseResponse = { id: number; text: ParsedText } | { id: number; prepared: PreparedDocument[] }
  | { id: number; rebuilt: RebuiltDocument[] };

/**
 * Markdown at least this long is parsed on a worker: remark takes about 20 ms per kilobyte of list
 * items on a busy machine (a 16 KB list held the event loop 300 ms), and a round trip to the worker
 * costs well under a millisecond. Shorter text is parsed where it is, faster than the trip.
 */
export const OFF_THREAD_CHARS = 2_048;

/**
 * At most this many workers parse at once (imports and calls together); more work waits its turn. One
 * per core (at least two, so that a long parse of a call never holds an import's), at most eight.
 */
export const PARSE_WORKERS = Math.min(8, Math.max(2, availableParallelism()));

/**
 * How deep the parser may nest containers before it is given a text: twice the limit on blocks, as
 * room for the estimate's errors (markdown-depth.ts); the blocks it makes are measured exactly after.
 */
const PARSE_NESTING_LIMIT = 2 * MAX_BLOCK_DEPTH;

/** Parses Markdown and prepares imports and rebuilds, on worker threads when it can. */
export interface MarkdownFileParser {
  /**
   * Parses one call's Markdown. When `signal` aborts, the worker parsing it is ended (the parse cannot
   * be stopped any other way) and the answer is the signal's reason; nothing else is disturbed.
   */
  parseText(markdown: string, signal?: AbortSignal): Promise<ParsedText>;
  /** An import's documents parsed, given ids and stamps, serialised and derived into index rows. */
  prepareImport(work: ImportWork): Promise<PreparedDocument[]>;
  /** A rebuild's document files read, checked and derived into index rows. */
  prepareRebuild(docs: RebuildDocWork[]): Promise<RebuiltDocument[]>;
  close(): Promise<void>;
}

/**
 * A parser on worker threads when this module runs compiled (the built kernel, where the worker's
 * JavaScript sits beside it), else on this thread (the TypeScript sources under a test runner, which
 * a worker cannot load). Tests of the worker run the built module.
 */
export function createMarkdownFileParser(): MarkdownFileParser {
  const script = workerScript();
  return script ? workerParser(script) : inlineParser();
}

function workerScript(): URL | undefined {
  const url = new URL('./markdown-worker.js', import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/**
 * Markdown → drafts without ids (the main thread gives them, from the one place that guarantees no id
 * repeats), the same on a worker and on this thread. Text nested too deeply for the parser is refused
 * unparsed; the drafts are refused when they nest deeper than a document file may.
 */
export function parseMarkdownText(markdown: string): ParsedText {
  const nesting = estimateNesting(markdown, PARSE_NESTING_LIMIT);
  if (nesting.depth > PARSE_NESTING_LIMIT) return { ok: false, depth: nesting.depth, line: nesting.line };
  const drafts = markdownToBlocks(markdown, () => '');
  const depth = treeHeight(drafts);
  return depth > MAX_BLOCK_DEPTH ? { ok: false, depth } : { ok: true, drafts: withoutIds(drafts) };
}

/** Parses a file's text (read already), refusing one over `maxChars` or nested too deep, saying why. */
export function parseMarkdownSource(markdown: string, maxChars: number): ParsedFile {
  if (markdown.length > maxChars) return { ok: false, reason: `larger than ${maxChars} characters` };
  const parsed = parseMarkdownText(markdown);
  if (!parsed.ok) return { ok: false, reason: `nests blocks ${parsed.depth} levels deep${parsed.line ? ` (line ${parsed.line})` : ''}; a document holds at most ${MAX_BLOCK_DEPTH}` };
  return parsed;
}

/**
 * Reads and parses one file to import, the same on the worker and on this thread. YAML front matter that
 * is a map of properties (as Jekyll, Hugo or Obsidian write it, and as an export writes a document's
 * attributes) becomes `attrs`; anything else at the top stays Markdown (it was read as a rule and a heading).
 */
export function parseMarkdownFile(path: string, maxChars: number): ParsedFile {
  try {
    const text = decodeNoteText(readFileSync(path));
    const front = text.startsWith('---') && looksLikeProperties(text) ? readFrontMatter(text) : undefined;
    if (front?.problem !== undefined) {
      // Kept in the note as Markdown (a rule and its lines), nothing lost; said, as the person meant properties.
      const parsed = parseMarkdownSource(text, maxChars);
      return parsed.ok ? { ...parsed, note: `${front.problem.replace(/;[^;]*$/, '')}: kept as the note's text` } : parsed;
    }
    if (front === undefined || front.body === text || Object.keys(front.attrs).length === 0) return parseMarkdownSource(text, maxChars);
    const parsed = parseMarkdownSource(front.body, maxChars);
    return parsed.ok ? { ...parsed, attrs: front.attrs } : parsed;
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Whether the lines between a file's first two `---` lines read as YAML properties: the first a `key:`,
 * each other one a `key:`, a list item or an indented continuation, none a `#` line. Two rules around
 * Markdown (`# Minutes`, `Status: draft`, as an export writes a document that starts with a rule) are
 * not front matter: YAML took the heading for a comment, and the text was lost.
 */
function looksLikeProperties(text: string): boolean {
  const lines = text.slice(0, 65_536).split(/\r?\n/);
  let keys = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^(?:---|\.\.\.)[ \t]*$/.test(line)) return keys > 0;
    if (line.trim() === '') continue;
    // A key has no colon before its own (`Status: draft`), or no blank in it (`og:image: a.png`): a
    // sentence (`We met at 10:30. Result: approved`) is none; a `#` line, a YAML comment, may be a
    // heading or a tag, which would be lost.
    if (/^(?:[^\s#:-][^:]*|[^\s#:-]\S*):(?:[ \t]|$)/.test(line)) keys++;
    else if (keys === 0 || !/^(?:[ \t]|- )/.test(line)) return false;
  }
  return false;
}

function withoutIds(drafts: DraftBlock[]): DraftBlock[] {
  for (const draft of drafts) {
    delete draft.id;
    if (draft.children) withoutIds(draft.children);
  }
  return drafts;
}

function inlineParser(): MarkdownFileParser {
  return {
    async parseText(markdown, signal) {
      signal?.throwIfAborted();
      return parseMarkdownText(markdown);
    },
    async prepareImport(work) {
      return prepareImport(work);
    },
    async prepareRebuild(docs) {
      return prepareRebuild(docs);
    },
    async close() { /* nothing held */ },
  };
}

function workerParser(script: URL): MarkdownFileParser {
  const pool = new WorkerPool<ParseWork, ParseResponse>(script, PARSE_WORKERS, { name: 'the Markdown worker' });
  return {
    async parseText(markdown, signal) {
      const response = await pool.run({ markdown }, signal);
      if (!('text' in response)) throw new Error('the Markdown worker answered a text parse with something else');
      return response.text;
    },
    async prepareImport(work) {
      const response = await pool.run({ prepare: work });
      if (!('prepared' in response)) throw new Error('the Markdown worker answered an import with something else');
      return response.prepared;
    },
    async prepareRebuild(docs) {
      const response = await pool.run({ rebuild: docs });
      if (!('rebuilt' in response)) throw new Error('the Markdown worker answered a rebuild with something else');
      return response.rebuilt;
    },
    close: () => pool.close(),
  };
}
