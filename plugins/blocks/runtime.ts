import { KernelError, newId, type IntentJournal, type Logger } from '../../core/index.js';
import type { MoveIntent } from './document-moves.js';
import type { DraftBlock } from './block-model.js';
import type { BlockStore } from './block-store.js';
import { markdownToBlocks } from './markdown-in.js';
import { plainParagraph } from './plain-paragraph.js';
import { createMarkdownFileParser, type MarkdownFileParser } from './markdown-parser.js';

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
  markdownToBlocks(markdown: string): DraftBlock[];
  /** Reads and parses the files of an import (on a worker thread when it can). */
  files: MarkdownFileParser;
  checkMarkdownSize(markdown: string): void;
  /** Document moves in progress (two renames), finished at the next start if a crash cuts one short. */
  moves: IntentJournal<MoveIntent>;
}

export function createRuntime(store: BlockStore, workspaceRoot: string, config: BlocksConfig, log: Logger, moves: IntentJournal<MoveIntent>): BlocksRuntime {
  return {
    store, workspaceRoot, config, log, moves,
    busyNotebooks: new Map(),
    files: createMarkdownFileParser(),
    markdownToBlocks: (markdown) => plainParagraph(markdown, () => newId()) ?? markdownToBlocks(markdown, () => newId()),
    checkMarkdownSize(markdown) {
      if (markdown.length <= config.maxMarkdownChars) return;
      throw new KernelError('PAYLOAD_TOO_LARGE', `The Markdown is ${markdown.length} characters; the limit is ${config.maxMarkdownChars}. Split it into several calls`,
        { details: { field: 'markdown', length: markdown.length, limit: config.maxMarkdownChars } });
    },
  };
}
