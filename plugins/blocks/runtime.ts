import { KernelError, newId, type ActionCall, type IntentJournal, type Logger } from '../../core/index.js';
import { NotebookNotices } from './notebook-notices.js';
import type { MoveIntent } from './document-moves.js';
import type { RemovalIntent } from './document-removal.js';
import type { ImportJournal } from './import-undo.js';
import type { DraftBlock } from './block-model.js';
import type { BlockStore } from './block-store.js';
import { markdownToBlocks } from './markdown-in.js';
import { plainParagraph } from './plain-paragraph.js';
import { tooDeep } from './block-depth.js';
import { OFF_THREAD_CHARS, createMarkdownFileParser, parseMarkdownText, type MarkdownFileParser } from './markdown-parser.js';

export interface BlocksConfig {
  /** Markdown accepted by one call (characters); larger input is refused before it is parsed. */
  maxMarkdownChars: number;
  /** Watch data/ for documents edited by hand while serving. */
  watch: boolean;
  /** Create the welcome notebook in a workspace that has no notebook yet. */
  welcome: boolean;
}

export const DEFAULT_CONFIG: BlocksConfig = { maxMarkdownChars: 1_000_000, watch: true, welcome: true };

/** What every action of the plugin shares. */
export interface BlocksRuntime {
  store: BlockStore;
  /** The workspace folder: import and export never reach inside it. */
  workspaceRoot: string;
  config: BlocksConfig;
  log: Logger;
  /** Notebooks a long operation (an import, an export) is working in: not to be removed meanwhile. */
  busyNotebooks: Map<string, string>;
  /** Told before a notebook is renamed, its settings change, or it goes (snapshots: who did it). */
  notebookNotices: NotebookNotices;
  /** Trusted Markdown (the welcome notebook) → drafts, on this thread. */
  markdownToBlocks(markdown: string): DraftBlock[];
  /**
   * A call's Markdown → drafts (without ids): refused when too large or nested deeper than a document
   * may be (INVALID_INPUT, field 'markdown'); long text is parsed on a worker, stopped with the call.
   */
  parseMarkdown(markdown: string, call: Pick<ActionCall, 'signal'>): Promise<DraftBlock[]>;
  /** Reads and parses the files of an import, and long Markdown of calls (on worker threads when it can). */
  files: MarkdownFileParser;
  checkMarkdownSize(markdown: string): void;
  /** Document moves in progress (two renames), finished at the next start if a crash cuts one short. */
  moves: IntentJournal<MoveIntent>;
  /** Document removals in progress (its folder of children, its file), finished likewise. */
  removals: IntentJournal<RemovalIntent>;
  /** The steps of imports in progress, undone at the next start if a crash cuts an import short. */
  imports: ImportJournal;
}

export function createRuntime(store: BlockStore, workspaceRoot: string, config: BlocksConfig, log: Logger, journals: { moves: IntentJournal<MoveIntent>; removals: IntentJournal<RemovalIntent>; imports: ImportJournal }): BlocksRuntime {
  const files = createMarkdownFileParser();
  const checkMarkdownSize = (markdown: string): void => {
    if (markdown.length <= config.maxMarkdownChars) return;
    throw new KernelError('PAYLOAD_TOO_LARGE', `The Markdown is ${markdown.length} characters; the limit is ${config.maxMarkdownChars}. Split it into several calls`,
      { details: { field: 'markdown', length: markdown.length, limit: config.maxMarkdownChars } });
  };
  return {
    store, workspaceRoot, config, log, ...journals, files, checkMarkdownSize,
    busyNotebooks: new Map(),
    notebookNotices: new NotebookNotices(),
    markdownToBlocks: (markdown) => plainParagraph(markdown, () => newId()) ?? markdownToBlocks(markdown, () => newId()),
    async parseMarkdown(markdown, call) {
      checkMarkdownSize(markdown);
      const plain = plainParagraph(markdown, () => '');
      if (plain) return plain.map(({ id: _id, ...draft }) => draft);
      // The signal is asked for only here: creating it costs, and short text is parsed at once.
      const parsed = markdown.length < OFF_THREAD_CHARS ? parseMarkdownText(markdown) : await files.parseText(markdown, call.signal);
      if (!parsed.ok) throw tooDeep('markdown', parsed.depth, parsed.line !== undefined ? { line: parsed.line } : {});
      return parsed.drafts;
    },
  };
}
