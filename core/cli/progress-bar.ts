import type { ProgressUpdate } from '../plugin-api.js';
import type { CliIO } from './cli-io.js';
import { printable } from './chat/terminal-text.js';

const WIDTH = 24;

/**
 * Shows an action's progress as a bar on standard error: redrawn in place on a terminal, and as a
 * new line at most every tenth of the way (and at the end) otherwise, so that a log stays short.
 */
export function progressBar(io: CliIO, stream: NodeJS.WriteStream | null = process.stderr): { update(progress: ProgressUpdate): void; end(): void } {
  const inPlace = stream?.isTTY === true && io.write !== undefined;
  let lastTenth = -1;
  let drawn = false;
  return {
    update(progress) {
      const line = render(progress);
      if (inPlace) {
        stream!.write(`\r${line}\u001b[K`);
        drawn = true;
        return;
      }
      const tenth = progress.total ? Math.floor((progress.done / progress.total) * 10) : Math.floor(Math.log2(progress.done + 1));
      if (tenth === lastTenth) return;
      lastTenth = tenth;
      io.err(line);
    },
    end() {
      if (inPlace && drawn) stream!.write('\n');
    },
  };
}

function render(progress: ProgressUpdate): string {
  // A plugin's words, written to a terminal: control characters (an escape sequence) shown, not obeyed.
  const what = progress.message ? ` ${printable(progress.message)}` : '';
  if (!progress.total) return `  ${progress.done}${what}`;
  const share = Math.min(1, progress.done / progress.total);
  const filled = Math.round(share * WIDTH);
  return `  [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.round(share * 100)}% ${progress.done}/${progress.total}${what}`;
}
