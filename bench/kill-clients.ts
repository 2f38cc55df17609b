/**
 * The kill bench's clients (bench/kill-cycle.ts): each makes changes one after another, chosen at
 * random, and tells the ledger what it sent and what was acknowledged, until the server is killed.
 */
import { seededUniform } from '../fakes/seeded-random.js';
import { acknowledged, sent, subtreeOf, type Ledger } from './kill-ledger.js';

export type Caller = (path: string, body: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: Record<string, unknown> }>;

/** A seeded generator: a failing run is repeated with its seed. */
export const random = seededUniform;

const WORDS = 'note agent kernel block paragraph memory search index snapshot history 读书 写作 gate effect plugin'.split(' ');

export function paragraph(next: () => number, marker: string): string {
  const words = [marker];
  let length = marker.length;
  while (length < 400) {
    const word = WORDS[Math.floor(next() * WORDS.length)]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

/** What a client works with: its own blocks and documents, the shared ones, and how to call. */
interface Client {
  name: string;
  ledger: Ledger;
  notebook: string;
  /** The documents made before the clients started; `home` is the one this client appends to. */
  docs: readonly string[];
  home: string;
  mine: string[];
  myDocs: string[];
  next: () => number;
  pick<T>(list: readonly T[]): T;
  /** The change's result, or undefined when it was refused (a failure, said). */
  call(what: string, path: string, body: unknown): Promise<Record<string, unknown> | undefined>;
}

/** One kind of change: false when the server refused it (the client stops). */
type Change = (client: Client, marker: string) => Promise<boolean>;

const append: Change = async (c, marker) => {
  const result = await c.call('an append', 'blocks/block/append', { parentId: c.home, markdown: paragraph(c.next, `a-${marker}`) });
  if (!result) return false;
  const id = (result.ids as string[])[0]!;
  c.ledger.blockDocs.set(id, [c.home]);
  c.ledger.blockTexts.set(id, [`a-${marker}`]);
  c.mine.push(id);
  c.ledger.counts.appends++;
  return true;
};

const update: Change = async (c, marker) => {
  const id = c.mine[c.mine.length - 1 - Math.floor(c.next() * Math.min(3, c.mine.length))]!;
  sent(c.ledger.blockTexts, id, `u-${marker}`);
  if (!(await c.call('an update', 'blocks/block/update', { id, markdown: paragraph(c.next, `u-${marker}`) }))) return false;
  acknowledged(c.ledger.blockTexts, id, `u-${marker}`);
  c.ledger.counts.updates++;
  return true;
};

const remove: Change = async (c) => {
  const id = c.mine.shift()!;
  c.ledger.blocksMayBeGone.add(id);
  if (!(await c.call('a delete', 'blocks/block/delete', { id }))) return false;
  c.ledger.blocksDeleted.add(id);
  c.ledger.counts.deletes++;
  return true;
};

/** A block moved to another document: two files change together. */
const moveBlock: Change = async (c) => {
  const id = c.pick(c.mine);
  const to = c.pick(c.docs.filter((doc) => doc !== c.ledger.blockDocs.get(id)![0]));
  sent(c.ledger.blockDocs, id, to);
  if (!(await c.call('a block move', 'blocks/block/move', { id, parentId: to }))) return false;
  acknowledged(c.ledger.blockDocs, id, to);
  c.ledger.counts.blockMoves++;
  return true;
};

/** Some under a document of its own, so that removals take child documents along. */
const createDocument: Change = async (c, marker) => {
  const parent = c.myDocs.length > 0 && c.next() < 0.3 ? c.pick(c.myDocs) : null;
  const result = await c.call('a document create', 'blocks/document/create', { notebook: c.notebook, title: `t-${marker}`, markdown: paragraph(c.next, `d-${marker}`), ...(parent === null ? {} : { parentId: parent }) });
  if (!result) return false;
  const id = result.id as string;
  c.ledger.docParents.set(id, [parent]);
  c.ledger.docTitles.set(id, [`t-${marker}`]);
  c.myDocs.push(id);
  c.ledger.counts.documents++;
  return true;
};

/** A document moved under another, or back to the top: its file and its folder of children move. */
const moveDocument: Change = async (c) => {
  const id = c.pick(c.myDocs);
  const parent = c.next() < 0.3 ? null : c.pick(c.docs);
  sent(c.ledger.docParents, id, parent);
  if (!(await c.call('a document move', 'blocks/document/move', { id, notebook: c.notebook, ...(parent === null ? {} : { parentId: parent }) }))) return false;
  acknowledged(c.ledger.docParents, id, parent);
  c.ledger.counts.documentMoves++;
  return true;
};

const rename: Change = async (c, marker) => {
  const id = c.pick(c.myDocs);
  sent(c.ledger.docTitles, id, `r-${marker}`);
  if (!(await c.call('a rename', 'blocks/document/rename', { id, title: `r-${marker}` }))) return false;
  acknowledged(c.ledger.docTitles, id, `r-${marker}`);
  c.ledger.counts.renames++;
  return true;
};

/** A document removed, its child documents with it. */
const removeDocument: Change = async (c) => {
  const id = c.pick(c.myDocs);
  const gone = subtreeOf(c.ledger, id);
  for (const doc of gone) {
    c.ledger.docsMayBeGone.add(doc);
    if (c.myDocs.includes(doc)) c.myDocs.splice(c.myDocs.indexOf(doc), 1);
  }
  if (!(await c.call('a document remove', 'blocks/document/remove', { id }))) return false;
  for (const doc of gone) c.ledger.docsRemoved.add(doc);
  c.ledger.counts.removes++;
  return true;
};

/** The change for a draw in [0, 1): mostly appends and updates, some of every other kind. */
function choose(c: Client, draw: number): Change {
  if (draw < 0.5 || c.mine.length < 3) return append;
  if (draw < 0.7) return update;
  if (draw < 0.8) return remove;
  if (draw < 0.86) return moveBlock;
  if (draw < 0.91 || c.myDocs.length === 0) return createDocument;
  if (draw < 0.95) return moveDocument;
  return draw < 0.97 ? rename : removeDocument;
}

export interface ClientSetup {
  call: Caller;
  ledger: Ledger;
  notebook: string;
  docs: readonly string[];
  home: string;
  name: string;
  next: () => number;
  failures: string[];
  /** Set just before the kill: from then on a call that dies with its connection is expected. */
  killing: { now: boolean };
}

/**
 * One client's changes until the server stops answering. A change the live server refuses, or one
 * that throws before the kill (a reset, an answer that is not what the action returns), is a failure.
 */
export async function runClient(setup: ClientSetup): Promise<void> {
  const { ledger, failures, name, next } = setup;
  const client: Client = {
    name, ledger, notebook: setup.notebook, docs: setup.docs, home: setup.home, mine: [], myDocs: [], next,
    pick: (list) => list[Math.floor(next() * list.length)]!,
    async call(what, path, body) {
      const answer = await setup.call(path, body);
      if (answer.status === 200) return answer.body.result as Record<string, unknown>;
      failures.push(`${name}: ${what} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
      return undefined;
    },
  };
  for (let n = 0; ; n++) {
    const change = choose(client, next());
    try {
      if (!(await change(client, `${name}-${n}`))) return;
    } catch (error) {
      // The connection died with the server: what was in flight may or may not have happened.
      if (!setup.killing.now) failures.push(`${name}: a change failed before the kill: ${(error as Error).message}`);
      return;
    }
  }
}
