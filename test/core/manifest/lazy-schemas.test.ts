import { describe, expect, it } from 'vitest';
import { isValidRecord, loadNativeManifests } from '../../../core/manifest/load-manifests.js';
import { CODE_ROOT, NATIVE_MANIFESTS_DIR } from '../../../core/paths.js';

describe("the kernel's own manifests, compiled on first use", () => {
  it('validate every action input as the eagerly compiled schemas do: verdict, errors and defaults', async () => {
    const lazy = (await loadNativeManifests(NATIVE_MANIFESTS_DIR)).filter(isValidRecord);
    const eager = (await loadNativeManifests(NATIVE_MANIFESTS_DIR, CODE_ROOT, true)).filter(isValidRecord);
    expect(lazy.map((record) => record.compiled.manifest.id)).toEqual(eager.map((record) => record.compiled.manifest.id));
    const inputs = [{}, { unexpected: 1 }, { query: 'x', page: 0 }, { id: 'not-an-id', notebook: 5 }, { name: 'n', markdown: '' }, []];
    let compared = 0;
    for (const [i, record] of lazy.entries()) {
      for (const [k, action] of record.compiled.actions.entries()) {
        const other = eager[i]!.compiled.actions[k]!;
        for (const input of inputs) {
          // Twice: the first call compiles, the second reuses; useDefaults fills the value it is given.
          for (let round = 0; round < 2; round++) {
            const a = structuredClone(input);
            const b = structuredClone(input);
            const verdict = [action.validateInput(a), action.validateInput.errors ?? null, a];
            expect([action.wireName, ...verdict]).toEqual([other.wireName, other.validateInput(b), other.validateInput.errors ?? null, b]);
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('report a schema that does not compile when compiled eagerly (user plugins, plugin validate); lazily, at first use', async () => {
    const { validateManifest } = await import('../../../core/manifest/validate-manifest.js');
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const manifest = JSON.parse(readFileSync(join(NATIVE_MANIFESTS_DIR, 'system.json'), 'utf8')) as { tools: { actions: Record<string, { input: Record<string, unknown> }> }[] };
    const [first] = Object.values(manifest.tools[0]!.actions);
    first!.input = { type: 'object', properties: { a: { type: 'nonsense' } } };
    const eager = validateManifest(manifest, { file: 'system.json' });
    expect(eager.ok ? [] : eager.issues.map((issue) => issue.code)).toContain('MANIFEST_INPUT_SCHEMA_INVALID');
    const lazy = validateManifest(manifest, { file: 'system.json', trusted: true });
    if (!lazy.ok) throw new Error(JSON.stringify(lazy.issues));
    expect(() => lazy.value.actions[0]!.validateInput({})).toThrow();
  });
});
