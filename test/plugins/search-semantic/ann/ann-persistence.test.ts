import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAnnIndex, type AnnIndex, type AnnThread } from '../../../../plugins/search-semantic/ann/ann-index.js';

const D = 8;
let dir: string;
const opened: AnnIndex[] = [];

function vector(seed: number, dimensions = D): Float32Array {
  return Float32Array.from({ length: dimensions }, (_, j) => Math.sin(seed * 12.9898 + j * 78.233));
}

async function open(options: { dimensions?: number; model?: string } = {}, thread: AnnThread = 'main'): Promise<AnnIndex> {
  const index = await openAnnIndex(dir, 'blocks', { dimensions: options.dimensions ?? D, ...(options.model ? { model: options.model } : {}) }, thread);
  opened.push(index);
  return index;
}

async function savedIndex(count: number, watermark: number): Promise<void> {
  const index = await open();
  const keys = Array.from({ length: count }, (_, i) => i + 1);
  await index.upsert(keys, keys.map((key) => vector(key)));
  await index.save(watermark);
  await index.close();
}

const graphFiles = (): string[] => readdirSync(dir).filter((name) => name.endsWith('.usearch'));
const sidecarPath = (): string => join(dir, 'blocks.usearch.json');
const sidecar = (): { file: string; bytes: number } => JSON.parse(readFileSync(sidecarPath(), 'utf8')) as { file: string; bytes: number };
function editSidecar(change: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(readFileSync(sidecarPath(), 'utf8')) as Record<string, unknown>;
  change(value);
  writeFileSync(sidecarPath(), JSON.stringify(value));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'quire-ann-'));
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((index) => index.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('ANN index files', () => {
  it('opens a new index empty, asking for a rebuild, with watermark 0', async () => {
    const index = await open();
    expect(index.needsRebuild).toBe('no saved index');
    expect(index.savedWatermark).toBe(0);
    expect(index.size()).toBe(0);
    expect(await index.search(vector(1), 5)).toEqual([]);
  });

  it('reopens what was saved, with its watermark and the same answers', async () => {
    await savedIndex(50, 42);
    const index = await open();
    expect(index.needsRebuild).toBeUndefined();
    expect(index.savedWatermark).toBe(42);
    expect(index.size()).toBe(50);
    const [best] = await index.search(vector(7), 1);
    expect(best?.key).toBe(7);
    expect(best?.score).toBeCloseTo(1, 3);
    expect(graphFiles()).toEqual([sidecar().file]);
  });

  it('keeps one graph file across saves, and the sidecar names the newest', async () => {
    await savedIndex(10, 1);
    const index = await open();
    await index.upsert([99], [vector(99)]);
    await index.save(2);
    expect(graphFiles()).toEqual([sidecar().file]);
    await index.close();
    const again = await open();
    expect(again.savedWatermark).toBe(2);
    expect(await again.has(99)).toBe(true);
  });

  it('rebuilds from a truncated file, whether or not the sidecar size was edited to match', async () => {
    await savedIndex(200, 5);
    const path = join(dir, sidecar().file);
    const bytes = sidecar().bytes;
    truncateSync(path, Math.floor(bytes / 2));
    const bySize = await open();
    expect(bySize.needsRebuild).toMatch(/damaged|bytes/);
    await bySize.close();

    await savedIndex(200, 5);
    const second = join(dir, sidecar().file);
    truncateSync(second, Math.floor(sidecar().bytes / 2));
    editSidecar((value) => { value.bytes = Math.floor(sidecar().bytes / 2); });
    const byLoad = await open();
    expect(byLoad.needsRebuild).toMatch(/cannot be loaded/);
    expect(byLoad.size()).toBe(0);
    expect(byLoad.savedWatermark).toBe(0);
  });

  it('rebuilds from an empty file', async () => {
    await savedIndex(20, 5);
    writeFileSync(join(dir, sidecar().file), '');
    editSidecar((value) => { value.bytes = 0; });
    const index = await open();
    expect(index.needsRebuild).toMatch(/cannot be loaded/);
    expect(index.size()).toBe(0);
  });

  it('rebuilds when asked for other dimensions or another model', async () => {
    await savedIndex(20, 5);
    const wider = await open({ dimensions: 16 });
    expect(wider.needsRebuild).toMatch(/dimensions 8, not 16/);
    expect(wider.size()).toBe(0);
    await wider.close();
    await savedIndex(20, 5);
    const otherModel = await open({ model: 'm2' });
    expect(otherModel.needsRebuild).toMatch(/model null, not "m2"/);
  });

  it('rebuilds when the graph file holds vectors of other dimensions than its sidecar says', async () => {
    const wide = await open({ dimensions: 16 });
    await wide.upsert([1, 2, 3], [vector(1, 16), vector(2, 16), vector(3, 16)]);
    await wide.save(1);
    await wide.close();
    const wideFile = join(dir, sidecar().file);
    const wideBytes = sidecar().bytes;
    copyFileSync(wideFile, join(dir, 'wide.copy'));
    await savedIndex(3, 1);
    copyFileSync(join(dir, 'wide.copy'), join(dir, sidecar().file));
    editSidecar((value) => { value.bytes = wideBytes; });
    const index = await open();
    expect(index.needsRebuild).toMatch(/does not hold what its sidecar says/);
    expect(index.size()).toBe(0);
  });

  it('rebuilds from a missing graph file, a damaged sidecar, or a sidecar of an unknown format', async () => {
    await savedIndex(5, 3);
    rmSync(join(dir, sidecar().file));
    expect((await open()).needsRebuild).toMatch(/missing/);
    await savedIndex(5, 3);
    writeFileSync(sidecarPath(), '{"format": 1, "fi');
    expect((await open()).needsRebuild).toMatch(/not valid JSON/);
    await savedIndex(5, 3);
    editSidecar((value) => { value.format = 2; });
    expect((await open()).needsRebuild).toMatch(/unknown format/);
  });

  it('keeps the previous pair when a save stopped before its sidecar, and removes the stray graph file', async () => {
    await savedIndex(30, 7);
    const current = sidecar().file;
    // What a crash after the graph file was written, before the sidecar was replaced, leaves behind.
    copyFileSync(join(dir, current), join(dir, 'blocks.zzzz-0000.usearch'));
    truncateSync(join(dir, 'blocks.zzzz-0000.usearch'), 100);
    writeFileSync(join(dir, '.blocks.usearch.json.0a1b2c3d4e5f.tmp'), '{"format": 1, "fi');
    writeFileSync(join(dir, 'other.zzzz-0000.usearch'), 'not ours');
    const index = await open();
    expect(index.needsRebuild).toBeUndefined();
    expect(index.savedWatermark).toBe(7);
    expect(index.size()).toBe(30);
    expect(readdirSync(dir).sort()).toEqual(['blocks.usearch.json', current, 'other.zzzz-0000.usearch'].sort());
  });

  it('saves and reopens through the worker thread the same as on this thread', async () => {
    const index = await open({}, 'worker');
    await index.upsert([1, 2, 3], [vector(1), vector(2), vector(3)]);
    await index.save(11);
    await index.close();
    const again = await open({}, 'worker');
    expect(again.savedWatermark).toBe(11);
    expect((await again.search(vector(2), 1))[0]?.key).toBe(2);
  });
});
