import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isValidRecord, loadNativeManifests } from '../../core/manifest/load-manifests.js';
import { isValidWireName } from '../../core/manifest/wire-name.js';
import { NATIVE_MANIFESTS_DIR, CODE_ROOT } from '../../core/paths.js';
import { REPO_ROOT, useHarness } from '../helpers/harness.js';


const manifestFiles = readdirSync(NATIVE_MANIFESTS_DIR).filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json'));

describe('contract of every native manifest', () => {
  const harness = useHarness();

  it('finds the native manifests', () => {
    expect(NATIVE_MANIFESTS_DIR).toBe(join(REPO_ROOT, 'manifests'));
    expect(manifestFiles.length).toBeGreaterThan(0);
  });

  it.each(manifestFiles)('%s validates, matches its file and folder, and its schemas compile', async (file) => {
    // Eager: at start-up the kernel compiles these schemas on first use, trusting this test that they compile.
    const records = await loadNativeManifests(NATIVE_MANIFESTS_DIR, CODE_ROOT, true);
    const record = records.find((candidate) => basename(candidate.file) === file);
    if (!record?.ok) throw new Error(JSON.stringify(record && !record.ok ? record.issues : 'missing', null, 2));
    const { manifest, actions } = record.compiled;
    expect(manifest.id).toBe(basename(file, '.json'));
    expect(manifest.entry).toBe(`plugins/${manifest.id}/index.js`);
    expect(record.entryPath.startsWith(join(CODE_ROOT, 'plugins', manifest.id))).toBe(true);
    const declared = manifest.tools.flatMap((tool) => Object.keys(tool.actions).map((action) => `${tool.name}.${action}`));
    expect(actions.map((action) => `${action.tool}.${action.action}`)).toEqual(declared);
    for (const action of actions) {
      expect(isValidWireName(action.wireName)).toBe(true);
      expect(action.spec.description.length).toBeGreaterThan(10);
      expect(typeof action.validateInput).toBe('function');
    }
  });

  it('gives every action of every native plugin a unique wire name', async () => {
    const records = (await loadNativeManifests(NATIVE_MANIFESTS_DIR)).filter(isValidRecord);
    const names = records.flatMap((record) => record.compiled.actions.map((action) => action.wireName));
    expect(new Set(names).size).toBe(names.length);
  });

  it('activates every native plugin to exactly its declared actions', async () => {
    const kernel = await harness.boot({ realManifests: true });
    const records = (await loadNativeManifests(NATIVE_MANIFESTS_DIR)).filter(isValidRecord);
    for (const record of records) {
      const { manifest } = record.compiled;
      expect(kernel.plugins.isActive(manifest.id)).toBe(true);
      const registered = kernel.registry.list().filter((action) => action.pluginId === manifest.id).map((action) => action.wireName).sort();
      expect(registered).toEqual(record.compiled.actions.map((action) => action.wireName).sort());
    }
  });
});
