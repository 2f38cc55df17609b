import { KernelError, PluginError, isKernelError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ActionCall } from '../plugin-api.js';
import { runInActionScope } from '../egress/action-scope.js';
import type { PreparedCall } from './prepared-call.js';

export interface RunOptions {
  timeoutMs: number;
  log: Logger;
  onRefused(target: string): void;
}

/**
 * Runs a handler inside its action scope (so undeclared egress is refused), bounded by a time limit and
 * the caller's signal. Whatever the handler throws leaves here wrapped with the plugin's id.
 */
export async function runHandler(call: PreparedCall, options: RunOptions): Promise<unknown> {
  const { entry } = call;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onCallerAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const fail = (error: KernelError): void => {
      controller.abort(error);
      reject(error);
    };
    timer = setTimeout(() => fail(new KernelError('ACTION_TIMEOUT', `${entry.wireName} did not finish within ${options.timeoutMs} ms`)), options.timeoutMs);
    onCallerAbort = () => fail(new KernelError('ACTION_CANCELLED', `${entry.wireName} was cancelled`));
    if (call.signal?.aborted) onCallerAbort();
    else call.signal?.addEventListener('abort', onCallerAbort, { once: true });
  });
  stopped.catch(() => undefined);
  const actionCall: ActionCall = { callId: call.id, principal: call.principal, signal: controller.signal, log: options.log };
  const scope = {
    plugin: entry.pluginId, tool: entry.tool, action: entry.action, declaredEffects: entry.declaredEffects,
    onRefused: (_kind: 'egress', target: string) => options.onRefused(target),
  };
  try {
    const running = runInActionScope(scope, () => Promise.resolve().then(() => entry.handler(call.input, actionCall)));
    return await Promise.race([running, stopped]);
  } catch (error) {
    throw wrapPluginError(error, entry.pluginId, `${entry.tool}.${entry.action}`);
  } finally {
    clearTimeout(timer);
    if (onCallerAbort) call.signal?.removeEventListener('abort', onCallerAbort);
  }
}

function wrapPluginError(error: unknown, pluginId: string, action: string): KernelError {
  if (error instanceof PluginError) return error;
  if (isKernelError(error)) {
    return new PluginError(error.code, pluginId, error.message, { action, cause: error, details: error.details });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new PluginError('PLUGIN_ERROR', pluginId, message, { action, cause: error });
}
