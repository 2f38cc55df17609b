import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IntentJournal } from '../../core/fs/intent-journal.js';
import type { FileChange } from '../../plugins/snapshots/file-change.js';
import { SnapshotRepo } from '../../plugins/snapshots/snapshot-repo.js';
import { CLI } from '../helpers/cli-process.js';
import { REPO_ROOT } from '../helpers/harness.js';
import { useBlocks } from './blocks/blocks-harness.js';

/** data/'s documents as path → SHA-256. */
async function stateOf(dataDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dataDir, path).split(sep).join('/')] = createHash('sha256').update(await readFile(path)).digest('hex');
  }
  return out;
}

const cliCreate = (workspace: string) => spawn(process.execPath, [CLI, 'snapshot', 'create', '--memo', 'cli', '--workspace', workspace], { cwd: REPO_ROOT, stdio: 'ignore' });

describe('a snapshot killed while it writes its objects', () => {
  const harness = useBlocks();

  it('leaves every listed snapshot whole, and the next snapshot and purge find a sound repository', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<{ id: string }>('notebook_create', { name: 'Notes' });
    const folder = join(await harness.tempDir(), 'md');
    await mkdir(folder, { recursive: true });
    for (let i = 0; i < 150; i++) await writeFile(join(folder, `note-${i}.md`), `# Note ${i}\n\n${'Some text of a note. '.repeat(20)}\n`);
    await act('import_markdown', { notebook: notebook.id, path: folder });
    await kernel.close();
    const data = join(workspace, 'data');
    const repo = () => new SnapshotRepo(join(workspace, 'repo'), data, new IntentJournal<FileChange>(join(workspace, '.quire', 'journal', 'snapshots')));
    const packs = join(workspace, 'repo', 'objects', 'pack');
    const documents = (await readdir(join(data, notebook.id))).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
    for (const [round, delayMs] of [0, 5, 30].entries()) {
      // Every document changed, so the snapshot has well over a pack's worth of new objects.
      for (const name of documents) await writeFile(join(data, notebook.id, name), `${(await readFile(join(data, notebook.id, name), 'utf8')).trimEnd()}${' '.repeat(round + 1)}\n`);
      const before = new Set(await readdir(packs).catch(() => [] as string[]));
      const child = cliCreate(workspace);
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const started = async () => (await readdir(packs).catch(() => [] as string[])).some((name) => !before.has(name));
      while (child.exitCode === null && !(await started())) await new Promise((resolve) => setTimeout(resolve, 1));
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill('SIGKILL');
      await exited;
      const after = repo();
      expect(await after.verify()).toMatchObject({ damaged: [] });
      const listed = await after.list();
      for (const summary of listed) expect(Object.keys((await after.get(summary.id)).files)).toHaveLength(summary.files);
    }
    // A snapshot to completion: it holds data/ exactly, and purge keeps the repository sound.
    const child = cliCreate(workspace);
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    const last = repo();
    const latest = (await last.latest())!;
    const now = await stateOf(data);
    expect(Object.fromEntries(Object.entries(latest.files).filter(([path]) => path in now).map(([path, entry]) => [path, entry.hash]))).toEqual(now);
    await last.purge();
    expect(await last.verify()).toMatchObject({ damaged: [] });
    expect(await readdir(packs)).not.toContainEqual(expect.stringMatching(/\.tmp$/));
  }, 120_000);
});
