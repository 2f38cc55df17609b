/**
 * Parses Markdown off the main thread: the files of an import, so that parsing (one core) and writing
 * files and the index (the other) overlap; and long Markdown given to a call, so that its parse never
 * holds the event loop and can be stopped at the call's time limit (by ending this worker).
 * Messages: { id, markdown } → { id, text }; { id, prepare } →
 * { id, prepared } (an import's documents ready to write, import-rows.ts); { id, rebuild } → { id, rebuilt }
 * (a rebuild's documents read and derived, rebuild-rows.ts).
 */
import { parentPort } from 'node:worker_threads';
import { prepareImport } from './import-rows.js';
import { prepareRebuild } from './rebuild-rows.js';
import { parseMarkdownText, type ParseRequest, type ParseResponse } from './markdown-parser.js';

parentPort?.on('message', (request: ParseRequest) => {
  const response: ParseResponse = 'markdown' in request
    ? { id: request.id, text: parseMarkdownText(request.markdown) }
    : 'prepare' in request
      ? { id: request.id, prepared: prepareImport(request.prepare) }
      : { id: request.id, rebuilt: prepareRebuild(request.rebuild) };
  parentPort!.postMessage(response);
});
