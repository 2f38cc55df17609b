import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournaledDocuments } from '../../../core/session/journaled-documents.js';
import { deepFreeze } from '../../../core/session/json-values.js';
import { SessionPaths, sessionKind } from '../../../core/session/session-files.js';
import type { SessionDocument, SessionEntry } from '../../../core/session/session-types.js';
import { caught } from '../../helpers/harness.js';

const folders: string[] = [];
afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }); });

async function documents() {
  const root = await mkdtemp(join(tmpdir(), 'quire-journaled-'));
  folders.push(root);
  const paths = new SessionPaths(root);
  return { paths, held: new JournaledDocuments(sessionKind(paths)), fresh: () => new JournaledDocuments(sessionKind(paths)) };
}

const round = (n: number, results: number): SessionEntry => ({ id: `r${n}`, type: 'assistant', content: '', toolCalls: Array.from({ length: results }, (_, i) => ({ id: `c${n}_${i}`, name: 'block_get', state: 'finished', result: `text ${n} ${i} `.repeat(100) })) });

describe('journaled documents', () => {
  it('holds the entries a caller froze as they are, so that later saves find them by identity', async () => {
    const { held } = await documents();
    const id = '20260101000000-abcdefg';
    let doc: SessionDocument = await held.write(id, { id, revision: 1, entries: [] });
    const entries: SessionEntry[] = [];
    for (let n = 0; n < 3; n++) {
      // A round as the turn loop makes it: saved while its calls change, then frozen once final.
      entries.push(round(n, 2));
      doc = await held.write(id, { id, revision: doc.revision + 1, entries: [...entries] });
      deepFreeze(entries[n]);
      doc = await held.write(id, { id, revision: doc.revision + 1, entries: [...entries], note: n });
    }
    // Every frozen round is held as the caller's object: nothing of it is compared or copied again.
    for (let n = 0; n < 3; n++) expect(doc.entries[n]).toBe(entries[n]);
    expect((await held.current(id))!.entries[0]).toBe(entries[0]);
  });

  it('refuses a line keeping more tool calls than its entry has, and leaves the files as they are', async () => {
    const { paths, fresh } = await documents();
    const id = '20260101000000-bcdefgh';
    await fresh().write(id, { id, revision: 1, entries: [round(0, 1)] });
    const line = { v: 2, revision: 2, keep: 0, keepCalls: 3, entries: [{ ...round(0, 1), toolCalls: [] }], set: {}, unset: [] };
    await writeFile(paths.journal(id), `${JSON.stringify(line)}\n`);
    const error = await caught(fresh().current(id));
    expect([error.code, error.details?.line]).toEqual(['WORKSPACE_INVALID', 1]);
    expect(error.message).toContain('keeps 3 tool calls');
    expect(await readFile(paths.journal(id), 'utf8')).toBe(`${JSON.stringify(line)}\n`);
  });
});
