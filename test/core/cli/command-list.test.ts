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

  it('answers a group\'s --help with its commands (exit 0), the group alone or an unknown one in it with exit 2', async () => {
    const run = async (argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, { out: (text) => void out.push(text), err: (text) => void err.push(text) });
      return { code, out, err };
    };
    for (const ask of ['--help', '-h', 'help']) {
      const help = await run(['snapshot', ask]);
      expect(help.code).toBe(0);
      expect(help.err).toEqual([]);
      expect(help.out.join('\n')).toMatch(/^Usage: quire snapshot <command> \[options\]/);
      expect(help.out.join('\n')).toContain('  snapshot rollback   make the notes exactly as in a snapshot');
    }
    const alone = await run(['skill']);
    expect(alone.code).toBe(2);
    expect(alone.err.join('\n')).toMatch(/^  skill restore +put an earlier version back/m);
    const unknown = await run(['snapshot', 'undo']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toEqual(["quire snapshot: unknown command 'undo', expected one of: snapshot create, snapshot list, snapshot diff, snapshot rollback, snapshot delete, snapshot verify"]);
  });
});
