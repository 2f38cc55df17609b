import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { claimIds, newId } from '../../../core/ids.js';
import { REPO_ROOT } from '../../helpers/harness.js';
import { dumpIndex, useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();
const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');

interface Created { id: string }

/** Notes with every kind of row an import derives: tags, references, attributes, code, tables, other scripts. */
async function richFolder(): Promise<string> {
  const folder = await tempDir('quire-rich-');
  await writeFile(join(folder, 'Plain.md'), 'Just words.\n\nMore words on a second line\nand a third.\n');
  await writeFile(join(folder, 'Tags.md'), '# Tagged #alpha#\n\nText with #beta# and #alpha# again, a ((20260102030405-abcdefg "ref")) and {{select 1}}.\n\n- [x] done #gamma#\n- [ ] open\n  - nested\n');
  await mkdir(join(folder, 'Tags'));
  await writeFile(join(folder, 'Tags', 'Child.md'), '## Child\n\n```c\n#if x#\n```\n\n$$\nx^2\n$$\n\n> quoted ＡＢＣ ﾀﾜｰ 東京 café ø\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n---\n');
  await mkdir(join(folder, 'Tags', 'Deeper'));
  await writeFile(join(folder, 'Tags', 'Deeper', 'Leaf.md'), `${'> '.repeat(20)}deep\n\n1. one\n2. two\n`);
  await mkdir(join(folder, 'Folder only'));
  await writeFile(join(folder, 'Folder only', 'Inside.md'), 'inside\ttab\u0001control\n');
  await writeFile(join(folder, 'Too deep.md'), `${'> '.repeat(3_000)}x\n`);
  for (let i = 0; i < 150; i++) await writeFile(join(folder, `n${String(i).padStart(3, '0')}.md`), `# N ${i}\n\nBody #t${i % 7}# text\n\n- a\n- b\n`);
  return folder;
}

describe('import with rows made on the workers (the built CLI)', () => {
  it('leaves an index equal to a rebuild, at the top of a notebook and below a document', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Rich' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent' });
    await kernel.close();
    const folder = await richFolder();
    for (const extra of [[], ['--parent', parent.id]]) {
      const result = await run(process.execPath, [CLI, 'import', folder, '--notebook', notebook.id, '--workspace', workspace, ...extra]).catch((error: { code: number; stdout: string; stderr: string }) => error);
      expect(result.stdout).toMatch(/^imported 158 document\(s\)/);
      expect(result.stderr).toContain('Too deep.md');
    }
    const before = dumpIndex(workspace);
    await run(process.execPath, [CLI, 'index', 'rebuild', '--workspace', workspace]);
    expect(dumpIndex(workspace)).toEqual(before);
  });
});

describe('ids made on other threads', () => {
  it('are claimed all or none: refused when one was issued here, claimed already, or repeated', () => {
    const now = new Date();
    const mine = newId(now);
    const stamp = mine.slice(0, 14);
    const fresh = [`${stamp}-zzzzzz0`, `${stamp}-zzzzzz1`];
    expect(claimIds([fresh[0]!, mine])).toBe(false);
    expect(claimIds([fresh[0]!, fresh[0]!])).toBe(false);
    expect(claimIds(fresh)).toBe(true);
    expect(claimIds([fresh[1]!])).toBe(false);
    // An id of an earlier second, claimed after this thread moved on, is checked against that second.
    const earlier = newId(new Date(now.getTime() - 5_000));
    newId(now);
    expect(claimIds([earlier])).toBe(false);
    expect(claimIds([`${earlier.slice(0, 14)}-zzzzzz2`])).toBe(true);
  });
});

describe('index rebuild with rows made on the workers (the built CLI)', () => {
  it('equals the index a start-up builds on this thread, with the same problems for a shared block id and a broken file', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Rebuilt' });
    const first = await act<Created>('document_create', { notebook: notebook.id, title: 'First', markdown: '# Head #tag#\n\npara with ((20260102030405-abcdefg))\n\n- [ ] item\n  - nested\n' });
    const second = await act<Created>('document_create', { notebook: notebook.id, title: 'Second', parentId: first.id, markdown: '```js\nlet x;\n```\n\n東京 ＡＢＣ\n' });
    const third = await act<Created>('document_create', { notebook: notebook.id, title: 'Third', parentId: second.id, markdown: 'third\n' });
    for (let i = 0; i < 150; i++) await act('document_create', { notebook: notebook.id, title: `Many ${i}`, markdown: `many ${i} #m${i % 3}#\n` });
    await kernel.close();
    // A block of First also in Third (an id in two files), and a broken file.
    const data = join(workspace, 'data', notebook.id);
    const firstFile = join(data, `${first.id}.json`);
    const thirdFile = join(data, first.id, second.id, `${third.id}.json`);
    const shared = (JSON.parse(await readFile(firstFile, 'utf8')) as { children: unknown[] }).children[1];
    const thirdDoc = JSON.parse(await readFile(thirdFile, 'utf8')) as { children: unknown[] };
    thirdDoc.children.push(shared);
    await writeFile(thirdFile, `${JSON.stringify(thirdDoc, null, 2)}\n`);
    await writeFile(join(data, '20260102030405-brokenx.json'), '{ not json');
    const rebuilt = await run(process.execPath, [CLI, 'index', 'rebuild', '--workspace', workspace]).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(rebuilt.stdout).toMatch(/^indexed 154 document\(s\)/);
    const afterRebuild = { ...dumpIndex(workspace), problems: problemsOf(workspace) };
    expect(afterRebuild.problems.map((problem) => problem.path).sort()).toEqual([`${notebook.id}/${first.id}/${second.id}/${third.id}.json`, `${notebook.id}/20260102030405-brokenx.json`].sort());
    // The start-up of a workspace without an index builds it the ordinary way, on the main thread.
    await rm(join(workspace, 'index'), { recursive: true, force: true });
    const again = await boot({ workspace });
    await again.kernel.close();
    expect({ ...dumpIndex(workspace), problems: problemsOf(workspace) }).toEqual(afterRebuild);
  });
});

function problemsOf(workspace: string): { path: string; reason: string; other: string | null }[] {
  const db = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
  try {
    return db.prepare('SELECT path, reason, other FROM problems ORDER BY path').all() as { path: string; reason: string; other: string | null }[];
  } finally {
    db.close();
  }
}
