import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolPins } from '../../../core/mcp/client/tool-pins.js';

describe('tool pins', () => {
  const folders: string[] = [];
  afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }); });
  const folder = async () => { const made = await mkdtemp(join(tmpdir(), 'quire-pins-')); folders.push(made); return made; };

  it('keeps any tool name, __proto__ included, across a reload, and never loses a pin to a concurrent write', async () => {
    const dir = await folder();
    const pins = new ToolPins(dir);
    await pins.load();
    await Promise.all([
      pins.pin('srv', [{ tool: '__proto__', hash: 'a'.repeat(64), wireName: 'srv_t___proto__' }]),
      pins.pin('srv', [{ tool: 'constructor', hash: 'b'.repeat(64), wireName: 'srv_constructor' }]),
      pins.pin('other', [{ tool: 'x', hash: 'c'.repeat(64), wireName: 'other_x' }]),
    ]);
    const again = new ToolPins(dir);
    await again.load();
    expect(again.get('srv', '__proto__')?.hash).toBe('a'.repeat(64));
    expect(again.get('srv', 'constructor')?.hash).toBe('b'.repeat(64));
    expect(again.get('other', 'x')?.wireName).toBe('other_x');
    expect(again.known('nobody')).toBe(false);
  });

  it('reports a damaged pins file instead of failing the start', async () => {
    const dir = await folder();
    await writeFile(join(dir, 'mcp-pins.json'), '{ not json');
    const pins = new ToolPins(dir);
    await pins.load();
    expect(pins.problem).toContain('mcp-pins.json');
  });
});
