/**
 * Parses Markdown files off the main thread during an import, so that parsing (one core) and writing
 * files and the index (the other) overlap. Messages: { id, paths, maxChars } → { id, results }.
 */
import { parentPort } from 'node:worker_threads';
import { parseMarkdownFile, type ParseRequest, type ParseResponse } from './markdown-parser.js';

parentPort?.on('message', (request: ParseRequest) => {
  const response: ParseResponse = { id: request.id, results: request.paths.map((path) => parseMarkdownFile(path, request.maxChars)) };
  parentPort!.postMessage(response);
});
