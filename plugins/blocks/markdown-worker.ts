/**
 * Parses Markdown files off the main thread during an import, so that parsing (one core) and writing
 * files and the index (the other) overlap. Messages: { id, paths, maxChars } → { id, results }.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { newId } from '../../core/index.js';
import { markdownToBlocks } from './markdown-in.js';
import type { ParseRequest, ParseResponse, ParsedFile } from './markdown-parser.js';

function parseFile(path: string, maxChars: number): ParsedFile {
  try {
    const markdown = readFileSync(path, 'utf8');
    if (markdown.length > maxChars) return { ok: false, reason: `larger than ${maxChars} characters` };
    return { ok: true, drafts: markdownToBlocks(markdown, () => newId()) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

parentPort?.on('message', (request: ParseRequest) => {
  const response: ParseResponse = { id: request.id, results: request.paths.map((path) => parseFile(path, request.maxChars)) };
  parentPort!.postMessage(response);
});
