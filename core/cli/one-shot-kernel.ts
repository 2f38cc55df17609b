import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readKernelConfigFile, type KernelConfigFile } from '../config/kernel-config.js';
import { isKernelError } from '../errors.js';
import { Kernel } from '../kernel.js';
import type { Logger, LogFields } from '../log.js';
import type { Principal } from '../plugin-api.js';
import type { CliIO } from './cli-io.js';

/** Long CLI work (an import of a large folder, a rebuild) is bounded by the person, not by a timer. */
const CLI_ACTION_TIMEOUT_MS = 3_600_000;
const CLI_ACTIVATION_TIMEOUT_MS = 600_000;

export const CLI_PRINCIPAL: Principal = { kind: 'person', name: 'cli', role: 'admin' };

/**
 * Boots a kernel over a workspace for one command and closes it: the workspace lock keeps the command
 * from running beside a serving kernel. Progress records the actions log are shown as lines.
 */
export async function withKernel<T>(root: string, io: CliIO, run: (kernel: Kernel) => Promise<T>, options: { configuredActionLimit?: boolean } = {}): Promise<T> {
  const file: KernelConfigFile = existsSync(join(root, 'quire.json')) ? await readKernelConfigFile(join(root, 'quire.json')) : {};
  const blocks = file.plugins?.blocks ?? {};
  const config: KernelConfigFile = {
    ...file,
    actions: options.configuredActionLimit ? { ...file.actions } : { ...file.actions, timeoutMs: CLI_ACTION_TIMEOUT_MS },
    pluginHost: { ...file.pluginHost, activationTimeoutMs: CLI_ACTIVATION_TIMEOUT_MS },
    plugins: { ...file.plugins, blocks: { ...blocks, config: { ...blocks.config, watch: false } } },
  };
  const kernel = await Kernel.boot({ workspace: root, config, logger: progressLogger(io) });
  try {
    return await run(kernel);
  } finally {
    await kernel.close();
  }
}

/** Runs one action as the person at the terminal and returns its value. */
export async function callAction(kernel: Kernel, target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const outcome = await kernel.pipeline.call({ target, input, principal: CLI_PRINCIPAL });
  if (outcome.status !== 'ok') throw new Error(`${target} unexpectedly asked for a confirmation`);
  return outcome.value as Record<string, unknown>;
}

export function describeError(error: unknown): string {
  if (isKernelError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function progressLogger(io: CliIO): Logger {
  const logger: Logger = {
    debug: () => undefined,
    info: (message: string, fields?: LogFields) => {
      if (message.endsWith('progress') && fields) io.err(`  ${Object.entries(fields).filter(([key]) => key !== 'tag').map(([key, value]) => `${key} ${String(value)}`).join(', ')}`);
    },
    warn: (message: string, fields?: LogFields) => io.err(`warning: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
    error: (message: string, fields?: LogFields) => io.err(`error: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
    child: () => logger,
  };
  return logger;
}
