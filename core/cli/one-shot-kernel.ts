import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readKernelConfigFile, type KernelConfigFile } from '../config/kernel-config.js';
import { KernelError, isKernelError } from '../errors.js';
import { Kernel } from '../kernel.js';
import type { Logger, LogFields } from '../log.js';
import type { Principal, ProgressUpdate } from '../plugin-api.js';
import { progressBar } from './progress-bar.js';
import { exitOnLostLock, type CliIO } from './cli-io.js';
import { assertWorkspaceExists } from './workspace-check.js';

export { assertWorkspaceExists };

/**
 * Long CLI work (an import of a large folder, a rebuild) is bounded by the person, not by a timer. A
 * plugin's activation keeps quire.json's limit, as under serve: ten minutes here held `quire plugin
 * list`, and `quire mcp` before an MCP client, that long on a plugin whose activate hangs.
 */
const CLI_ACTION_TIMEOUT_MS = 3_600_000;

export const CLI_PRINCIPAL: Principal = { kind: 'person', name: 'cli', role: 'admin' };

/**
 * Boots a kernel over a workspace for one command and closes it: the workspace lock keeps the command
 * from running beside a serving kernel.
 */
export async function withKernel<T>(root: string, io: CliIO, run: (kernel: Kernel) => Promise<T>, options: { configuredActionLimit?: boolean; watchHandEdits?: boolean } = {}): Promise<T> {
  assertWorkspaceExists(root);
  const file: KernelConfigFile = existsSync(join(root, 'quire.json')) ? await readKernelConfigFile(join(root, 'quire.json')) : {};
  const blocks = file.plugins?.blocks ?? {};
  const config: KernelConfigFile = {
    ...file,
    actions: options.configuredActionLimit ? { ...file.actions } : { ...file.actions, timeoutMs: CLI_ACTION_TIMEOUT_MS },
    // A one-shot command needs no watcher; a long one (the chat, for hours) keeps quire.json's, so that
    // notes edited by hand meanwhile are searched and listed (they were not, until a restart).
    plugins: { ...file.plugins, blocks: { ...blocks, config: { ...blocks.config, ...(options.watchHandEdits ? {} : { watch: false }) } } },
  };
  const kernel = await Kernel.boot({ workspace: root, config, logger: progressLogger(io) });
  // A long command (the chat, an import) whose lock is taken ends as serve does: at once, writing nothing more.
  void kernel.lockLost.then((holder) => exitOnLostLock((line) => io.err(line), 'command', holder));
  try {
    return await run(kernel);
  } finally {
    await kernel.close();
  }
}

/**
 * Runs one action as the person at the terminal and returns its value; with `io`, its progress is
 * shown as a bar, and Ctrl-C stops it at its next safe point (a second Ctrl-C ends the process).
 */
export async function callAction(kernel: Kernel, target: string, input: Record<string, unknown>, io?: CliIO): Promise<Record<string, unknown>> {
  const bar = io ? progressBar(io) : undefined;
  const stop = new AbortController();
  let interrupts = 0;
  const undo = io?.onInterrupt?.(() => {
    if (++interrupts > 1) process.exit(130);
    io.err('stopping at the next safe point (Ctrl-C again to quit at once)');
    stop.abort();
  });
  try {
    const outcome = await kernel.pipeline.call({ target, input, principal: CLI_PRINCIPAL, signal: stop.signal, ...(bar ? { onProgress: (update: ProgressUpdate) => bar.update(update) } : {}) });
    if (outcome.status !== 'ok') throw new Error(`${target} unexpectedly asked for a confirmation`);
    return outcome.value as Record<string, unknown>;
  } finally {
    bar?.end();
    undo?.();
  }
}

export function describeError(error: unknown): string {
  if (isKernelError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function progressLogger(io: CliIO): Logger {
  const logger: Logger = {
    debug: () => undefined,
    // Progress is shown by the bar from the action's own reports, not from log lines.
    info: () => undefined,
    warn: (message: string, fields?: LogFields) => io.err(`warning: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
    error: (message: string, fields?: LogFields) => io.err(`error: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
    child: () => logger,
  };
  return logger;
}
