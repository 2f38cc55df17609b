import { dirname } from 'node:path';
import type { KernelConfig } from '../config/kernel-config.js';
import type { Logger } from '../log.js';
import type { ActionCall, PluginContext, PluginHandlers } from '../plugin-api.js';
import type { ValidManifestRecord } from '../manifest/load-manifests.js';
import type { HandlerShape } from './plugin-ipc.js';
import { PluginProcess } from './plugin-process.js';
import { CapabilityBroker } from './remote-capabilities.js';

/**
 * Whether a plugin runs in a process of its own: a user plugin the person has not marked trusted.
 * Native plugins and trusted user plugins run in the kernel's process, as before.
 */
export function runsOutOfProcess(record: ValidManifestRecord, config: KernelConfig): boolean {
  return record.source === 'user' && config.plugins.get(record.compiled.manifest.id)?.trusted !== true;
}

/** The process of one plugin, wired to the kernel-side context that checks what it gets and provides. */
export function createPluginProcess(record: ValidManifestRecord, pluginConfig: Record<string, unknown>, ctx: PluginContext, config: KernelConfig, log: Logger): PluginProcess {
  const { manifest, actions } = record.compiled;
  const long = new Set(actions.filter((action) => action.spec.long === true).map((action) => `${action.tool}.${action.action}`));
  return new PluginProcess({
    pluginId: manifest.id,
    entryPath: record.entryPath,
    pluginDir: dirname(record.file),
    config: pluginConfig,
    requires: manifest.requires ?? [],
    provides: manifest.provides ?? [],
    actions: actions.map((action) => ({ tool: action.tool, action: action.action, declaredEffects: [...action.spec.effects] })),
    capabilities: new CapabilityBroker(manifest.requires ?? [], (name) => ctx.get(name)),
    activationTimeoutMs: config.pluginHost.activationTimeoutMs,
    stopGraceMs: config.actions.stopGraceMs,
    timeoutOf: (tool, action) => (long.has(`${tool}.${action}`) ? config.actions.jobTimeoutMs : config.actions.timeoutMs),
    log,
    onProvide: (name, value) => ctx.provide(name, value),
  });
}

/**
 * Handlers as the registry holds them: plain async functions that send the call to the process. The
 * pipeline, gate, audit and MCP see the same interface wherever a plugin runs. A name the plugin
 * returned that is not a function stays one, so the kernel's handler check reports it as in-process.
 */
export function proxyHandlers(shape: HandlerShape, process: PluginProcess): PluginHandlers {
  const handlers: PluginHandlers = {};
  for (const [tool, actions] of Object.entries(shape)) {
    const toolHandlers: Record<string, PluginHandlers[string][string]> = {};
    for (const [action, isFunction] of Object.entries(actions)) {
      const handler = (input: Record<string, unknown>, call: ActionCall): Promise<unknown> => process.call(tool, action, input, call);
      Object.defineProperty(toolHandlers, action, { value: isFunction ? handler : null, enumerable: true, writable: true, configurable: true });
    }
    Object.defineProperty(handlers, tool, { value: toolHandlers, enumerable: true, writable: true, configurable: true });
  }
  return handlers;
}
