import { beforeEach, describe, expect, it } from 'vitest';
import { Kernel } from '../../../core/kernel.js';
import { recordId } from '../../../core/plugins/catalog-checks.js';
import { caught, useHarness } from '../../helpers/harness.js';
import { fixtureEvents } from '../../fixtures/native/plugins/fixture-events.js';

const person = { kind: 'person', name: 'tester', role: 'admin' } as const;

/** The problems a user plugin was refused with at start (the kernel started anyway). */
function refusal(kernel: Kernel, id: string): { code: string; message: string; pointer?: string }[] | undefined {
  const record = kernel.plugins.getCatalog()?.all.find((candidate) => candidate.source === 'user' && recordId(candidate) === id);
  return record ? kernel.plugins.problemsOf(record)?.map((problem) => ({ ...problem })) : undefined;
}

describe('plugin host', () => {
  const harness = useHarness();
  beforeEach(() => {
    fixtureEvents().length = 0;
  });

  it('activates plugins after the plugins they require, and disposes them in reverse order', async () => {
    const kernel = await harness.boot({ plugins: ['note-stats', 'notes'] });
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: person });
    const outcome = await kernel.pipeline.call({ target: 'note_stats_count', input: {}, principal: person });
    expect(outcome.status === 'ok' && outcome.value).toEqual({ count: 1 });
    await kernel.close();
    expect(fixtureEvents()).toEqual(['activate:notes', 'activate:note-stats', 'dispose:note-stats', 'dispose:notes']);
  });

  it('stops the boot naming the plugin and the capability when a requirement is missing', async () => {
    const error = await caught(harness.boot({ plugins: ['note-stats'] }));
    expect(error.code).toBe('PLUGIN_DEPENDENCY_MISSING');
    expect(error.message).toContain("plugin 'note-stats' requires 'notes.store'");
  });

  it('says which disabled plugin would have provided a missing requirement', async () => {
    const error = await caught(harness.boot({ plugins: ['note-stats', 'notes'], config: { plugins: { notes: { enabled: false } } } }));
    expect(error.code).toBe('PLUGIN_DEPENDENCY_MISSING');
    expect(error.message).toContain("provided by 'notes', which is disabled");
  });

  it('stops the boot naming every plugin of a dependency cycle', async () => {
    const error = await caught(harness.boot({ plugins: ['cycle-a', 'cycle-b'] }));
    expect(error.code).toBe('PLUGIN_DEPENDENCY_CYCLE');
    expect(error.details?.cycle).toEqual(['cycle-a', 'cycle-b', 'cycle-a']);
  });

  it('refuses a plugin whose handlers differ from its declared actions, naming both differences', async () => {
    const error = await caught(harness.boot({ plugins: ['mismatch'] }));
    expect(error.code).toBe('PLUGIN_ACTION_MISMATCH');
    expect(error.details).toMatchObject({ plugin: 'mismatch', missing: ['mm.b'], undeclared: ['mm.c'] });
    expect(fixtureEvents()).toContain('dispose:mismatch');
  });

  it('gives up on an activation that exceeds the time limit and disposes what was activated', async () => {
    // Each plugin's limit covers loading its module too: room for 'notes' to load and activate on a loaded machine.
    const error = await caught(harness.boot({ plugins: ['notes', 'slow'], config: { pluginHost: { activationTimeoutMs: 1_000 } } }));
    expect(error.code).toBe('PLUGIN_ACTIVATION_TIMEOUT');
    expect(error.message).toContain('slow');
    expect(fixtureEvents()).toEqual(['activate:notes', 'dispose:slow', 'dispose:notes']);
  });

  it('counts loading the module in the time limit: a top-level await that never settles cannot hang the boot', async () => {
    const manifest = { id: 'stuck', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
    const kernel = await harness.boot({
      config: { pluginHost: { activationTimeoutMs: 100 } },
      userPlugins: { stuck: { manifest, code: 'await new Promise(() => {});\nexport default { activate() { return {}; } };' } },
    });
    expect(refusal(kernel, 'stuck')).toEqual([expect.objectContaining({ code: 'PLUGIN_ACTIVATION_TIMEOUT', message: expect.stringContaining('stuck') })]);
  });

  // In the kernel's process (a trusted plugin): an untrusted one's process is ended at the limit instead (out-of-process.test.ts).
  it('disposes at once what a timed-out activation registers after giving up on it', async () => {
    const manifest = { id: 'late', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
    const code = `export default { activate(ctx) {
      return new Promise((resolve) => setTimeout(() => {
        ctx.onDispose(() => { globalThis[Symbol.for('quire:test:fixture-events')].push('dispose:late'); });
        resolve({});
      }, 150));
    } };`;
    const kernel = await harness.boot({ config: { pluginHost: { activationTimeoutMs: 50 }, plugins: { late: { trusted: true } } }, userPlugins: { late: { manifest, code } } });
    expect(refusal(kernel, 'late')?.map((problem) => problem.code)).toEqual(['PLUGIN_ACTIVATION_TIMEOUT']);
    await expect.poll(() => fixtureEvents()).toEqual(['dispose:late']);
  });

  it.each([
    ['get-undeclared', 'notes.store'],
    ['provide-undeclared', 'sneaky.secret'],
    ['get-internal', 'core.grants'],
  ])('denies a plugin a capability its manifest does not declare (%s)', async (attempt, capability) => {
    const error = await caught(harness.boot({ plugins: ['sneaky', 'notes'], config: { plugins: { sneaky: { config: { attempt } } } } }));
    expect(error.code).toBe('CAPABILITY_DENIED');
    expect(error.message).toContain(capability);
    expect(error.message).toContain('sneaky');
  });

  it('refuses a user plugin that requires an internal core service', async () => {
    const manifest = { id: 'grabby', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', requires: ['core.grants'], tools: [] };
    const kernel = await harness.boot({ userPlugins: { grabby: { manifest, code: 'export default { activate() { return {}; } };' } } });
    expect(refusal(kernel, 'grabby')).toEqual([expect.objectContaining({ code: 'PLUGIN_DEPENDENCY_MISSING', message: expect.stringContaining("plugin 'grabby' requires 'core.grants'") })]);
    expect(kernel.plugins.isActive('grabby')).toBe(false);
  });

  it('answers a conflict naming the field when a plugin disabled in quire.json is enabled with an invalid config', async () => {
    const kernel = await harness.boot({ config: { plugins: { grader: { enabled: false, config: { level: 'very' } } } }, userPlugins: {
      grader: { manifest: { id: 'grader', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', config: { type: 'object', properties: { level: { type: 'integer' } } }, tools: [] }, code: 'export default { activate() { return {}; } };' },
    } });
    const error = await caught(kernel.plugins.setEnabled('grader', true));
    expect(error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('/plugins/grader/config/level') });
    expect(kernel.plugins.isActive('grader')).toBe(false);
  });

  it('disposes a plugin whose enable was still activating when the host closed, and enables none after', async () => {
    const kernel = await harness.boot({ config: { plugins: { slow: { enabled: false, trusted: true } } }, userPlugins: {
      slow: { manifest: { id: 'slow', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] }, code: 'export default { async activate() { await new Promise((done) => setTimeout(done, 300)); return {}; } };' },
    } });
    const enabling = kernel.plugins.setEnabled('slow', true);
    await kernel.plugins.close();
    await enabling;
    // The old close finished while it activated, and the plugin became active after it.
    expect(kernel.plugins.isActive('slow')).toBe(false);
    expect((await caught(kernel.plugins.setEnabled('slow', true))).code).toBe('NOT_READY');
  });

  it("validates a plugin's config against its schema and applies the schema's defaults", async () => {
    const error = await caught(harness.boot({ plugins: ['notes'], config: { plugins: { notes: { config: { folder: 'Bad Folder' } } } } }));
    expect(error.code).toBe('PLUGIN_CONFIG_INVALID');
    expect(error.message).toContain('/plugins/notes/config/folder');
    const kernel = await harness.boot({ plugins: ['notes'] });
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'n', text: 'hello' }, principal: person });
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${kernel.workspace.dataDir}/fixture-notes/n.txt`)).toBe(true);
  });

  it('leaves a disabled plugin with no tools in the registry or the pipeline', async () => {
    const kernel = await harness.boot({ plugins: ['notes', 'egress'], config: { plugins: { notes: { enabled: false } } } });
    expect(kernel.registry.list().map((action) => action.pluginId)).not.toContain('notes');
    expect(kernel.registry.get('note_get')).toBeUndefined();
    const error = await caught(kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: person }));
    expect(error.code).toBe('ACTION_NOT_FOUND');
    expect(kernel.plugins.isActive('notes')).toBe(false);
  });

  it('does not let a broken manifest of a disabled plugin stop the boot', async () => {
    const kernel = await harness.boot({
      plugins: ['notes'],
      config: { plugins: { broken: { enabled: false } } },
      userPlugins: { broken: { manifest: { id: 'broken' }, code: '' } },
    });
    const broken = kernel.plugins.getCatalog()?.all.find((record) => !record.ok);
    expect(broken?.ok).toBe(false);
    expect(kernel.plugins.isActive('notes')).toBe(true);
  });

  it('refuses an enabled user plugin whose manifest is invalid, listing every problem', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], userPlugins: { broken: { manifest: { id: 'broken', tools: 'none' }, code: '' } } });
    const problems = refusal(kernel, 'broken')!;
    expect(problems.map((problem) => problem.code)).toContain('MANIFEST_FIELD_MISSING');
    expect(problems.map((problem) => problem.pointer)).toEqual(expect.arrayContaining(['/version', '/kernel', '/entry', '/description', '/tools']));
    expect(kernel.plugins.isActive('notes')).toBe(true);
  });

  it('refuses a user plugin whose id collides with a native one', async () => {
    const kernel = await harness.boot({
      plugins: ['notes'],
      userPlugins: { notes: { manifest: { id: 'notes', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] }, code: 'export default { activate() { return {}; } };' } },
    });
    expect(refusal(kernel, 'notes')?.map((problem) => problem.code)).toEqual(['PLUGIN_DUPLICATE_ID']);
    expect(kernel.registry.get('note_get')?.source).toBe('native');
  });

  it('refuses a user plugin defining a wire name another plugin holds, naming both', async () => {
    const clash = { id: 'clash', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js',
      tools: [{ name: 'note', description: 'x', actions: { get: { description: 'x', input: { type: 'object' }, effects: [] } } }] };
    const kernel = await harness.boot({
      plugins: ['notes'],
      userPlugins: { clash: { manifest: clash, code: 'export default { activate() { return { note: { get: () => ({}) } }; } };' } },
    });
    expect(refusal(kernel, 'clash')).toEqual([expect.objectContaining({ code: 'WIRE_NAME_COLLISION', message: expect.stringMatching(/'notes' and 'clash'/) })]);
    expect(kernel.registry.get('note_get')?.pluginId).toBe('notes');
    // Found from the manifests alone: the clashing plugin's code never ran.
    expect(fixtureEvents()).toEqual(['activate:notes']);
  });

  it('uses one DI container per kernel, so two kernels never share services', async () => {
    const first = await harness.boot({ plugins: ['notes'] });
    const second = await harness.boot({ plugins: ['notes'] });
    expect(first.container).not.toBe(second.container);
    expect(first.registry).not.toBe(second.registry);
    expect(first.workspace.root).not.toBe(second.workspace.root);
    const { container: globalContainer } = await import('tsyringe');
    const { ACTION_PIPELINE, WORKSPACE } = await import('../../../core/core-tokens.js');
    expect(globalContainer.isRegistered(ACTION_PIPELINE, true)).toBe(false);
    expect(globalContainer.isRegistered(WORKSPACE, true)).toBe(false);
  });

  it('reports a plugin entry that fails to load, naming the plugin', async () => {
    const manifest = { id: 'throws', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
    const kernel = await harness.boot({ userPlugins: { throws: { manifest, code: 'throw new Error("boom at import");' } } });
    expect(refusal(kernel, 'throws')).toEqual([expect.objectContaining({ code: 'PLUGIN_LOAD_FAILED', message: expect.stringMatching(/throws.*boom at import/) })]);
  });

  it('closes cleanly when closed twice', async () => {
    const kernel: Kernel = await harness.boot({ plugins: ['notes'] });
    await kernel.close();
    await kernel.close();
    expect(fixtureEvents().filter((event) => event === 'dispose:notes')).toHaveLength(1);
  });
});
