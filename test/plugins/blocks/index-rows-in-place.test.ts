import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlockIndex } from '../../../plugins/blocks/block-index.js';
import type { Block } from '../../../plugins/blocks/block-model.js';
import { cloneTree, forgetFingerprint } from '../../../plugins/blocks/index-rows.js';
import { openIndexDatabase, openIndexReader, type Db } from '../../../plugins/blocks/index-schema.js';

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    return state / 2 ** 32;
  };
}

function dump(db: Db): unknown {
  return ['documents', 'blocks', 'attributes', 'refs', 'tags'].map((table) => db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all());
}

const place = { notebook: 'nb', path: 'nb/doc.json', hpath: '/Doc' };

describe('writeDocument, saving one document again and again', () => {
  it('leaves the same rows as writing its last state into an empty index, through edits, moves, deletions and ids met twice', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-rows-'));
    try {
      const opened = (name: string): BlockIndex => {
        const file = join(dir, name);
        return new BlockIndex(openIndexDatabase(file).db, openIndexReader(file));
      };
      const live = opened('live.db');
      const next = random(7);
      let counter = 0;
      const leaf = (): Block => ({ id: `b${counter++}`, type: 'paragraph', content: `text ${counter} #tag${counter % 3}# ((b${counter % 5} "x"))`, attrs: { created: '1' } });
      let root: Block = { id: 'doc', type: 'document', content: 'Doc', attrs: { updated: '0' }, children: [leaf(), { id: 'l', type: 'list', attrs: {}, children: [{ id: 'li', type: 'listItem', attrs: {}, children: [leaf()] }] }, leaf()] };
      const containers = (block: Block, out: Block[] = []): Block[] => {
        if (block.children) { out.push(block); for (const child of block.children) containers(child, out); }
        return out;
      };
      for (let round = 0; round < 300; round++) {
        // Sometimes a fresh copy (as a batch makes), sometimes the same objects changed in place.
        if (next() < 0.5) root = cloneTree(root);
        const parents = containers(root);
        const parent = parents[Math.floor(next() * parents.length)]!;
        const kids = parent.children!;
        const pick = next();
        if (pick < 0.3 || kids.length === 0) kids.splice(Math.floor(next() * (kids.length + 1)), 0, leaf());
        else if (pick < 0.5) kids.splice(Math.floor(next() * kids.length), 1);
        else if (pick < 0.7) kids.reverse();
        else if (pick < 0.85) {
          // Changed in place, saying so (as touch() does for every change).
          const block = kids[Math.floor(next() * kids.length)]!;
          block.content = `changed ${round}`;
          block.attrs[`a${round % 4}`] = String(round);
          forgetFingerprint(block);
        } else if (kids.length > 0 && !kids[0]!.children) {
          // The same id twice in one tree (a hand-edited file can hold that), taken out again the next round.
          kids.push({ ...kids[0]!, attrs: { ...kids[0]!.attrs } });
        }
        root.attrs.updated = String(round);
        forgetFingerprint(root);
        root = cloneTree(root);
        live.writeDocument(root, place, null, { mtimeMs: round, size: round });
        if (round % 30 === 29) {
          const fresh = opened(`fresh-${round}.db`);
          fresh.writeDocument(cloneTree(root), place, null, { mtimeMs: round, size: round });
          expect(dump(live.db)).toEqual(dump(fresh.db));
          fresh.db.close();
        }
      }
      live.db.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('copies a block holding a `__proto__` key (a hand-edited file) as it is, without changing its prototype', () => {
    const block = JSON.parse('{"id":"a","type":"paragraph","attrs":{"__proto__":"x","k":"v"},"__proto__":{"z":1}}') as Block;
    const copy = cloneTree(block);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(block));
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(copy.attrs)).toBe(Object.prototype);
  });
});
