import { describe, expect, it } from 'vitest';
import { createKernelContainer } from '../../../core/container.js';
import { GRANTS_STORE, KERNEL_INFO, PLUGIN_VISIBLE_CORE_TOKENS } from '../../../core/core-tokens.js';
import { silentLogger } from '../../../core/log.js';
import { createPluginContext } from '../../../core/plugins/plugin-context.js';
import { BackendRegistry } from '../../../core/backends/backend-registry.js';
import type { PluginManifest, PluginSource } from '../../../core/plugin-api.js';
import { caught } from '../../helpers/harness.js';

function contextFor(requires: string[], provides: string[] = [], source: PluginSource = 'native', uses: string[] = []) {
  const container = createKernelContainer();
  container.registerInstance(GRANTS_STORE, { secret: true } as never);
  container.registerInstance(KERNEL_INFO, { version: '0.1.0', startedAt: 'now' });
  const manifest: PluginManifest = { id: 'probe', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [], requires, provides, uses };
  const provided = new Set<string>();
  const ctx = createPluginContext({ manifest, source, config: {}, log: silentLogger, container, visibleCoreTokens: PLUGIN_VISIBLE_CORE_TOKENS, addDisposer: () => undefined, provided, trusted: source === 'native', backends: new BackendRegistry() });
  return { ctx, container, provided };
}

describe('plugin context', () => {
  it('finds an optional capability it uses when a plugin provides it, and undefined otherwise', async () => {
    const { ctx, container } = contextFor([], [], 'native', ['search.semantic']);
    expect(ctx.find('search.semantic')).toBeUndefined();
    const other = createPluginContext({ manifest: { id: 'giver', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [], provides: ['search.semantic'] }, source: 'native', config: {}, log: silentLogger, container, visibleCoreTokens: PLUGIN_VISIBLE_CORE_TOKENS, addDisposer: () => undefined, provided: new Set(), trusted: true, backends: new BackendRegistry() });
    other.provide('search.semantic', { answer: 42 });
    expect(ctx.find<{ answer: number }>('search.semantic')?.answer).toBe(42);
    expect((await caught(() => ctx.find('search.other'))).code).toBe('CAPABILITY_DENIED');
  });

  it('keeps internal core services from a plugin even when its manifest lists them', async () => {
    const { ctx } = contextFor(['core.grants', 'core.kernel-info']);
    const error = await caught(() => ctx.get(GRANTS_STORE));
    expect(error.code).toBe('CAPABILITY_DENIED');
    expect(error.message).toContain('internal');
    expect(ctx.get(KERNEL_INFO).version).toBe('0.1.0');
  });

  it('registers what a plugin provides in its kernel\'s container only, and records it', () => {
    const { ctx, container, provided } = contextFor([], ['probe.service']);
    ctx.provide('probe.service', { ok: 1 });
    expect(provided.has('probe.service')).toBe(true);
    expect(container.resolve(Symbol.for('quire:probe.service'))).toEqual({ ok: 1 });
  });

  it('lets only a native plugin provide a gate.* capability, which steers the effects gate', async () => {
    for (const source of ['user', 'mcp'] as const) {
      const { ctx, container } = contextFor([], ['gate.notebook-scope'], source);
      const error = await caught(() => ctx.provide('gate.notebook-scope', { notebooksOf: () => [] }));
      expect(error.code).toBe('CAPABILITY_DENIED');
      expect(container.isRegistered(Symbol.for('quire:gate.notebook-scope'))).toBe(false);
    }
    const { ctx, container } = contextFor([], ['gate.notebook-scope'], 'native');
    ctx.provide('gate.notebook-scope', { notebooksOf: () => [] });
    expect(container.isRegistered(Symbol.for('quire:gate.notebook-scope'))).toBe(true);
  });

  it('refuses a token name that does not look like owner.name', async () => {
    const { ctx } = contextFor([]);
    expect((await caught(() => ctx.get('NotAName'))).message).toContain('owner.name');
  });
});
