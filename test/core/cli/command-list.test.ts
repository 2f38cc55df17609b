import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CliIO, Command } from '../../../core/cli/cli-io.js';
import { COMMANDS } from '../../../core/cli/command-list.js';
import { runCli } from '../../../core/cli/run-cli.js';
import { REPO_ROOT } from '../../helpers/harness.js';

const isCommand = (value: unknown): value is Command =>
  typeof value === 'object' && value !== null && typeof (value as Command).run === 'function' && typeof (value as Command).summary === 'string';

describe('the CLI command list (each command loaded only when it runs)', () => {
  it('names and sums up each command as its own module does', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
    expect(new Set(COMMANDS.map((entry) => entry.name)).size).toBe(COMMANDS.length);
  });

  it('lists every command that the command modules export', async () => {
    const folder = join(REPO_ROOT, 'core', 'cli', 'commands');
    const exported = new Set<string>();
    for (const file of await readdir(folder)) {
      if (!file.endsWith('.ts')) continue;
      const module = await import(pathToFileURL(join(folder, file)).href) as Record<string, unknown>;
      for (const value of Object.values(module)) {
        for (const item of Array.isArray(value) ? value : [value]) if (isCommand(item)) exported.add(item.name);
      }
    }
    expect(exported.size).toBeGreaterThan(20);
    expect([...exported].sort()).toEqual(COMMANDS.map((entry) => entry.name).sort());
  });

  it('says which command could not be loaded, with exit code 1, when its module fails to load', async () => {
    const said: string[] = [];
    const io: CliIO = { out: (text) => void said.push(text), err: (text) => void said.push(text) };
    const broken = [{ name: 'broken', summary: 'fails to load', load: () => Promise.reject(new Error("Cannot find module 'gone'")) }];
    expect(await runCli(['broken'], io, broken)).toBe(1);
    expect(said).toEqual(["quire broken: its code could not be loaded (Cannot find module 'gone'); reinstall Quire"]);
  });
});
