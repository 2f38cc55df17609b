import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DraftBlock } from './block-model.js';
import { markdownToBlocks } from './markdown-in.js';

export type ParsedFile = { ok: true; drafts: DraftBlock[] } | { ok: false; reason: string };
export interface ParseRequest { id: number; paths: string[]; maxChars: number }
export interface ParseResponse { id: number; results: ParsedFile[] }

/** Reads and parses Markdown files for an import. */
export interface MarkdownFileParser {
  parseFiles(paths: string[], maxChars: number): Promise<ParsedFile[]>;
  close(): Promise<void>;
}

/**
 * A parser on a worker thread when this module runs compiled (the built kernel, where the worker's
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
 * Reads and parses one file, the same on the worker and on this thread. The drafts carry no ids: the
 * main thread gives them, from the one place that guarantees no id repeats.
 */
export function parseMarkdownFile(path: string, maxChars: number): ParsedFile {
  try {
    const markdown = readFileSync(path, 'utf8');
    if (markdown.length > maxChars) return { ok: false, reason: `larger than ${maxChars} characters` };
    return { ok: true, drafts: withoutIds(markdownToBlocks(markdown, () => '')) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
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
    async parseFiles(paths, maxChars) {
      return paths.map((path) => parseMarkdownFile(path, maxChars));
    },
    async close() { /* nothing held */ },
  };
}

function workerParser(script: URL): MarkdownFileParser {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve(results: ParsedFile[]): void; reject(error: Error): void }>();
  const fail = (error: Error): void => {
    for (const pending of waiting.values()) pending.reject(error);
    waiting.clear();
    worker = undefined;
  };
  // Started on first use: most kernels never import anything.
  const start = (): Worker => {
    const started = new Worker(script);
    started.unref();
    started.on('message', (response: ParseResponse) => {
      const pending = waiting.get(response.id);
      waiting.delete(response.id);
      pending?.resolve(response.results);
    });
    started.on('error', fail);
    started.on('exit', (code) => { if (waiting.size > 0) fail(new Error(`the Markdown worker stopped (exit code ${code})`)); else worker = undefined; });
    return started;
  };
  return {
    parseFiles(paths, maxChars) {
      worker ??= start();
      const id = nextId++;
      const request: ParseRequest = { id, paths, maxChars };
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker!.postMessage(request);
      });
    },
    async close() {
      const running = worker;
      worker = undefined;
      if (running) await running.terminate();
    },
  };
}
