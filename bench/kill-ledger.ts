/**
 * What the kill bench's clients were told (bench/kill-cycle.ts), and the check of the files against
 * it after each recovery.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Acknowledged { appends: number; updates: number; deletes: number; blockMoves: number; documents: number; documentMoves: number; renames: number; removes: number; notebookRemovals: number; imports: number }

/**
 * What the clients were told, and what was in flight when the server died. Each list holds what a
 * thing may be found as: the last acknowledged value first, then any sent after it (at most one, as a
 * client waits for each answer); an acknowledgement cuts the list down to its value.
 */
export interface Ledger {
  /** Block id → the documents it may be in. */
  blockDocs: Map<string, string[]>;
  /** Block id → the markers its text may start with. */
  blockTexts: Map<string, string[]>;
  /** Blocks whose delete was sent (in flight it may have happened or not), and those acknowledged. */
  blocksMayBeGone: Set<string>;
  blocksDeleted: Set<string>;
  /** Document id → the parents it may be under (null: the notebook's top). */
  docParents: Map<string, (string | null)[]>;
  docTitles: Map<string, string[]>;
  docsMayBeGone: Set<string>;
  docsRemoved: Set<string>;
  /** Notebooks made to be removed during a cycle: their documents' files, and how far the removal got. */
  notebooks: Map<string, { files: string[]; removal: 'not sent' | 'in flight' | 'acknowledged' }>;
  counts: Acknowledged;
}

export function sent<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.get(key)!.push(value);
}

export function acknowledged<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.set(key, [value]);
}

export function newLedger(): Ledger {
  return {
    blockDocs: new Map(), blockTexts: new Map(), blocksMayBeGone: new Set(), blocksDeleted: new Set(),
    docParents: new Map(), docTitles: new Map(), docsMayBeGone: new Set(), docsRemoved: new Set(), notebooks: new Map(),
    counts: { appends: 0, updates: 0, deletes: 0, blockMoves: 0, documents: 0, documentMoves: 0, renames: 0, removes: 0, notebookRemovals: 0, imports: 0 },
  };
}

/** A document and those under it, as last acknowledged (a client's changes come one after another). */
export function subtreeOf(ledger: Ledger, id: string): string[] {
  const found = [id];
  for (let i = 0; i < found.length; i++) {
    for (const [doc, parents] of ledger.docParents) if (parents[0] === found[i] && !ledger.docsRemoved.has(doc)) found.push(doc);
  }
  return found;
}

interface FoundDocument { parent: string | null; title: string; file: string }

/** Every document file below the notebook's folder: its place, title and blocks (their texts). */
async function readDocuments(folder: string, kill: number, failures: string[]): Promise<{ docs: Map<string, FoundDocument>; blocks: Map<string, { doc: string; text: string }> }> {
  const docs = new Map<string, FoundDocument>();
  const blocks = new Map<string, { doc: string; text: string }>();
  const walk = async (dir: string, parent: string | null): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        await walk(join(dir, entry.name), entry.name);
        continue;
      }
      if (!entry.name.endsWith('.json') || entry.name.startsWith('.')) continue;
      const file = join(dir, entry.name);
      let root: { id: string; content?: string; children?: unknown[] };
      try {
        root = JSON.parse(await readFile(file, 'utf8')) as typeof root;
      } catch {
        failures.push(`kill ${kill}: ${file} is not whole JSON`);
        continue;
      }
      const other = docs.get(root.id);
      if (other) failures.push(`kill ${kill}: document ${root.id} has two files, ${other.file} and ${file}`);
      docs.set(root.id, { parent, title: root.content ?? '', file });
      const visit = (block: { id: string; content?: string; children?: unknown[] }): void => {
        const seen = blocks.get(block.id);
        if (seen) failures.push(`kill ${kill}: block ${block.id} is in two documents, ${seen.doc} and ${root.id}`);
        blocks.set(block.id, { doc: root.id, text: block.content ?? '' });
        for (const child of block.children ?? []) visit(child as typeof block);
      };
      for (const child of root.children ?? []) visit(child as typeof root);
    }
  };
  await walk(folder, null);
  return { docs, blocks };
}

async function filesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** What the files say after a recovery and a clean stop, against what was acknowledged. */
export async function checkFiles(workspace: string, notebook: string, ledger: Ledger, kill: number, failures: string[]): Promise<void> {
  const { docs, blocks } = await readDocuments(join(workspace, 'data', notebook), kill, failures);
  for (const [id, places] of ledger.blockDocs) {
    const found = blocks.get(id);
    if (ledger.blocksDeleted.has(id)) {
      if (found) failures.push(`kill ${kill}: block ${id}, whose delete was acknowledged, is back`);
    } else if (!found) {
      if (!ledger.blocksMayBeGone.has(id)) failures.push(`kill ${kill}: acknowledged block ${id} of ${places[0]} is missing`);
    } else {
      if (!places.includes(found.doc)) failures.push(`kill ${kill}: block ${id} is in ${found.doc}, not where it was last acknowledged (${places[0]})`);
      const texts = ledger.blockTexts.get(id)!;
      if (!texts.some((marker) => found.text.startsWith(`${marker} `))) failures.push(`kill ${kill}: block ${id} holds '${found.text.slice(0, 24)}…', not its last acknowledged text (${texts[0]})`);
    }
  }
  for (const [id, parents] of ledger.docParents) {
    const found = docs.get(id);
    if (ledger.docsRemoved.has(id)) {
      if (found) failures.push(`kill ${kill}: document ${id}, whose removal was acknowledged, is back`);
    } else if (!found) {
      if (!ledger.docsMayBeGone.has(id)) failures.push(`kill ${kill}: acknowledged document ${id} is missing`);
    } else {
      if (!parents.includes(found.parent)) failures.push(`kill ${kill}: document ${id} is under ${found.parent ?? 'the notebook'}, not where it was last acknowledged (${parents[0] ?? 'the notebook'})`);
      const titles = ledger.docTitles.get(id)!;
      if (!titles.includes(found.title)) failures.push(`kill ${kill}: document ${id} is titled '${found.title}', not its last acknowledged title (${titles[0]})`);
    }
  }
  for (const [id, { parent, file }] of docs) {
    if (parent !== null && !docs.has(parent)) failures.push(`kill ${kill}: document ${id} (${file}) is under ${parent}, which has no file: an orphan`);
  }
  const leftovers = (await filesBelow(join(workspace, 'data'))).filter((path) => path.endsWith('.tmp'));
  if (leftovers.length > 0) failures.push(`kill ${kill}: temporary files left after a start and a clean stop: ${leftovers.join(', ')}`);
  const journals = await filesBelow(join(workspace, '.quire', 'journal'));
  if (journals.length > 0) failures.push(`kill ${kill}: journal files left after a clean stop: ${journals.join(', ')}`);
  settle(ledger, docs, blocks);
}

/**
 * What a change in flight at the kill became is known now: each entry is cut down to what the files
 * hold, so the next kill checks it as acknowledged (a delete that did not happen must not let a later
 * loss of that block pass). A loss reported now is taken as the state, so it is not reported again.
 */
function settle(ledger: Ledger, docs: Map<string, FoundDocument>, blocks: Map<string, { doc: string; text: string }>): void {
  for (const id of ledger.blockDocs.keys()) {
    const found = blocks.get(id);
    if (found === undefined) ledger.blocksDeleted.add(id);
    else {
      ledger.blocksDeleted.delete(id);
      ledger.blockDocs.set(id, [found.doc]);
      ledger.blockTexts.set(id, [found.text.split(' ', 1)[0]!]);
    }
  }
  ledger.blocksMayBeGone.clear();
  for (const id of ledger.docParents.keys()) {
    const found = docs.get(id);
    if (found === undefined) ledger.docsRemoved.add(id);
    else {
      ledger.docsRemoved.delete(id);
      ledger.docParents.set(id, [found.parent]);
      ledger.docTitles.set(id, [found.title]);
    }
  }
  ledger.docsMayBeGone.clear();
}

/**
 * A notebook removed during a cycle is there whole (every document file it had) or not at all; once
 * its removal was acknowledged, not at all. Each is checked once, after the kill of its cycle.
 */
export async function checkNotebooks(workspace: string, ledger: Ledger, kill: number, failures: string[]): Promise<void> {
  for (const [id, { files, removal }] of ledger.notebooks) {
    const folder = join(workspace, 'data', id);
    const present = await Promise.all([join(folder, '.notebook.json'), ...files.map((file) => join(workspace, 'data', file))].map((path) => readFile(path).then(() => true, () => false)));
    const there = await readdir(folder).then(() => true, () => false);
    if (removal === 'acknowledged' && there) failures.push(`kill ${kill}: notebook ${id}, whose removal was acknowledged, is still in data/`);
    else if (there && present.includes(false)) failures.push(`kill ${kill}: notebook ${id} is part removed: ${present.filter((found) => !found).length} of its ${present.length} files are gone`);
    else if (removal === 'not sent' && !there) failures.push(`kill ${kill}: notebook ${id} is gone, though its removal was never sent`);
  }
  ledger.notebooks.clear();
}

