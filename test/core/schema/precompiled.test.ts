import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KERNEL_AJV_OPTIONS, PLUGIN_AJV_OPTIONS, createAjv } from '../../../core/schema/ajv.js';
import { precompileTargets, writePrecompiled } from '../../../core/schema/precompile-schemas.js';
import { loadPrecompiled, readPrecompiledAhead } from '../../../core/schema/precompiled.js';

const dir = mkdtempSync(join(tmpdir(), 'quire-precompiled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Values that exercise each property: wrong types, unknown fields, missing required ones, defaults. */
function inputsFor(schema: { properties?: Record<string, unknown> }): unknown[] {
  const inputs: unknown[] = [{}, { unexpected: 1 }, [], null, 'text', 3];
  for (const property of Object.keys(schema.properties ?? {})) {
    for (const value of [1, -1, 'x', '', true, null, [], [1, 'a'], {}, { unexpected: true }, 'a'.repeat(300), '2026-01-01T00:00:00Z']) inputs.push({ [property]: value });
  }
  return inputs;
}

describe('validators generated at build time', () => {
  const targets = precompileTargets();
  const written = writePrecompiled(dir, targets);
  const compiled = { kernel: createAjv(KERNEL_AJV_OPTIONS), plugin: createAjv(PLUGIN_AJV_OPTIONS) };

  it("cover quire.json, grants.json and every native plugin's config and action schemas", () => {
    expect(written).toBe(targets.length);
    const names = targets.map((target) => target.name);
    expect(names).toEqual(expect.arrayContaining(['kernel-config', 'grants-file', 'config.providers', 'action.search-fulltext.search.fulltext.input']));
    expect(readdirSync(dir)).toHaveLength(targets.length);
  });

  it('answer as the compiled schemas do: verdict, errors and defaults filled in', () => {
    let compared = 0;
    for (const { name, instance, schema } of targets) {
      const generated = loadPrecompiled(name, instance, schema, dir);
      if (!generated) throw new Error(`no generated validator for ${name}`);
      const reference = compiled[instance].compile(schema);
      for (const input of inputsFor(schema as { properties?: Record<string, unknown> })) {
        const a = structuredClone(input);
        const b = structuredClone(input);
        expect([name, generated(a), generated.errors ?? null, a]).toEqual([name, reference(b), reference.errors ?? null, b]);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('are not used for a schema other than the one they were generated from', () => {
    const [config] = targets;
    expect(loadPrecompiled(config!.name, config!.instance, { ...config!.schema, title: 'changed' }, dir)).toBeUndefined();
    expect(loadPrecompiled(config!.name, 'plugin', config!.schema, dir)).toBeUndefined();
    expect(loadPrecompiled('no-such-schema', 'kernel', {}, dir)).toBeUndefined();
  });

  it('are read into memory ahead of their first use, each served from there once, those used already skipped', async () => {
    const ahead = mkdtempSync(join(tmpdir(), 'quire-precompiled-'));
    try {
      cpSync(dir, ahead, { recursive: true });
      const [used, later] = targets;
      expect(loadPrecompiled(used!.name, used!.instance, used!.schema, ahead)).toBeDefined();
      expect(await readPrecompiledAhead(ahead)).toBe(targets.length - 1);
      // Nothing is read twice: what is in memory, or was used, is skipped while the files are there.
      expect(await readPrecompiledAhead(ahead)).toBe(0);
      // The files are gone: what answers now was read ahead.
      rmSync(ahead, { recursive: true, force: true });
      const validator = loadPrecompiled(later!.name, later!.instance, later!.schema, ahead);
      expect(validator).toBeDefined();
      expect([validator!({}), validator!([])]).toEqual([compiled[later!.instance].compile(later!.schema)({}), false]);
      // Served once: memory does not keep what was used.
      expect(loadPrecompiled(later!.name, later!.instance, later!.schema, ahead)).toBeUndefined();
      expect(await readPrecompiledAhead(ahead)).toBe(0);
    } finally {
      rmSync(ahead, { recursive: true, force: true });
    }
  });

  it('are the same files each time they are generated', () => {
    const again = mkdtempSync(join(tmpdir(), 'quire-precompiled-'));
    try {
      writePrecompiled(again, targets);
      for (const file of readdirSync(dir)) expect(readFileSync(join(again, file), 'utf8')).toBe(readFileSync(join(dir, file), 'utf8'));
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });
});
