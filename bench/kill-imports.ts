/**
 * An import in each kill cycle of bench/kill-cycle.ts: a folder of notes imported into a notebook of
 * its own at a random moment while the clients write. After the recovery its notebook must hold all of
 * the import's documents (acknowledged, or answered just before the kill) or none (not sent, or cut
 * short and undone at the start): never part of them.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Caller } from './kill-clients.js';

/**
 * Notes per import, every tenth with two child notes: 84 documents, two steps of the import (64
 * documents each). Under the clients' writes it takes 1–3 s, so most kills come before its answer,
 * many while part of its documents are written; the acknowledged case is the longer cycles'.
 */
const NOTES = 70;
const DOCUMENTS = NOTES + 2 * Math.ceil(NOTES / 10);

export interface ImportEntry {
  notebook: string;
  state: 'not sent' | 'in flight' | 'acknowledged';
}

/** A folder of NOTES notes of about 400 characters, outside the workspace. */
async function writeNotes(folder: string, kill: number): Promise<void> {
  await mkdir(folder, { recursive: true });
  const text = (i: number): string => `# Imported ${kill}-${i}\n\n${'A paragraph an import brings, about four hundred characters long in all. '.repeat(5)}\n`;
  for (let i = 0; i < NOTES; i++) {
    const name = `note-${String(i).padStart(4, '0')}`;
    await writeFile(join(folder, `${name}.md`), text(i));
    if (i % 10 !== 0) continue;
    await mkdir(join(folder, name), { recursive: true });
    for (let c = 0; c < 2; c++) await writeFile(join(folder, name, `child-${c}.md`), text(1000 * (i + 1) + c));
  }
}

/**
 * Makes the notebook and the notes; returns the entry to check and the run that imports them after a
 * random wait of up to 0.2 s (unless the kill came first).
 */
export async function importToRun(call: Caller, folder: string, kill: number, next: () => number, killing: { now: boolean }, failures: string[]): Promise<{ entry: ImportEntry; run: () => Promise<boolean> }> {
  const created = await call('blocks/notebook/create', { name: `Imports ${kill}` });
  if (created.status !== 200) throw new Error(`notebook/create answered ${created.status}`);
  const entry: ImportEntry = { notebook: (created.body.result as { id: string }).id, state: 'not sent' };
  const source = join(folder, 'sources', `import-${kill}`);
  await writeNotes(source, kill);
  const run = async (): Promise<boolean> => {
    await new Promise((resolve) => setTimeout(resolve, next() * 200));
    if (killing.now) return false;
    entry.state = 'in flight';
    try {
      // A long action: answered when its job ends (within the wait), as `{ result, job }`.
      const answer = await call('blocks/import/markdown', { notebook: entry.notebook, path: source }, { prefer: 'wait=120' });
      const documents = (answer.body.result as { documents?: number } | undefined)?.documents;
      if (answer.status !== 200 || documents !== DOCUMENTS) failures.push(`kill ${kill}: an import answered ${answer.status} with ${documents} documents: ${JSON.stringify(answer.body).slice(0, 200)}`);
      else entry.state = 'acknowledged';
      return entry.state === 'acknowledged';
    } catch (error) {
      if (!killing.now) failures.push(`kill ${kill}: an import failed before the kill: ${(error as Error).message}`);
      return false;
    }
  };
  return { entry, run };
}

/** Documents in the import's notebook (a kill may have left part of them, for the next start to undo). */
export async function importedSoFar(workspace: string, entry: ImportEntry): Promise<{ found: number; of: number }> {
  const names = await readdir(join(workspace, 'data', entry.notebook), { recursive: true }).catch(() => [] as string[]);
  return { found: names.filter((name) => name.endsWith('.json') && !name.endsWith('.notebook.json')).length, of: DOCUMENTS };
}

/** The import's notebook holds all of its documents or none, as the entry allows. */
export async function checkImport(workspace: string, entry: ImportEntry, kill: number, failures: string[]): Promise<void> {
  const { found } = await importedSoFar(workspace, entry);
  const allowed = entry.state === 'acknowledged' ? [DOCUMENTS] : entry.state === 'in flight' ? [0, DOCUMENTS] : [0];
  if (!allowed.includes(found)) failures.push(`kill ${kill}: an import ${entry.state} left ${found} of its ${DOCUMENTS} documents`);
}
