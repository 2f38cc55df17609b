import { describe, expect, it } from 'vitest';
import type { Block, BlockType } from '../../../plugins/blocks/block-model.js';
import { documentBytes } from '../../../plugins/blocks/document-bytes.js';
import { documentText } from '../../../plugins/blocks/document-file.js';
import { cloneTree } from '../../../plugins/blocks/index-rows.js';

/** A small seeded generator, so that a failure names an input that can be run again. */
function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), x | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = ['', 'note', 'a "quoted" word', 'line\nbreak', 'tab\there', '读书 写作', 'back\\slash', '\u2028', 'emoji 🙂', '</script>', '#tag# and ((20200101000000-aaaaaaa "a"))'];
const LEAVES: BlockType[] = ['paragraph', 'heading', 'code', 'math', 'html', 'thematicBreak'];
const CONTAINERS: BlockType[] = ['list', 'listItem', 'blockquote', 'callout'];

function tree(next: () => number): Block {
  let n = 0;
  const id = () => `20260101000000-${String(n++).padStart(7, '0')}`;
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const attrs = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const name of ['updated', 'created', 'updatedBy', 'custom-b', 'custom-a', 'name']) if (next() < 0.5) out[name] = pick(TEXTS);
    return out;
  };
  const block = (depth: number): Block => {
    if (depth < 4 && next() < 0.3) {
      const children = Array.from({ length: Math.floor(next() * 4) }, () => block(depth + 1));
      return { id: id(), type: pick(CONTAINERS), attrs: attrs(), children, ...(next() < 0.3 ? { content: pick(TEXTS) } : {}) };
    }
    const leaf: Block = { id: id(), type: pick(LEAVES), content: pick(TEXTS), attrs: attrs() };
    if (next() < 0.2) leaf.subtype = pick(['h2', 'task', 'js']);
    if (next() < 0.2) leaf.checked = next() < 0.5;
    if (next() < 0.1) leaf.start = Math.floor(next() * 10);
    return leaf;
  };
  return { id: id(), type: 'document', content: pick(TEXTS), attrs: attrs(), children: Array.from({ length: Math.floor(next() * 8) }, () => block(1)) };
}

function allBlocks(root: Block, into: Block[] = []): Block[] {
  into.push(root);
  for (const child of root.children ?? []) allBlocks(child, into);
  return into;
}

describe('document bytes assembled from remembered leaves', () => {
  it('equal the document text, also after changes in place that no one announced, copies and moves', () => {
    const next = random(11);
    for (let round = 0; round < 500; round++) {
      let root = tree(next);
      expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
      for (let step = 0; step < 6; step++) {
        root = next() < 0.5 ? cloneTree(root) : root;
        const blocks = allBlocks(root);
        const block = blocks[Math.floor(next() * blocks.length)]!;
        const change = Math.floor(next() * 7);
        if (change === 0) block.content = `${block.content ?? ''}x`;
        else if (change === 1) block.attrs.updated = `${next()}`;
        else if (change === 2) delete block.attrs[Object.keys(block.attrs)[0] ?? 'none'];
        else if (change === 3) block.checked = !block.checked;
        else if (change === 4 && block.children && block.children.length > 1) block.children.reverse();
        else if (change === 5 && block.children && block.children.length > 0) {
          // A leaf moved one level deeper (its remembered text was made for another depth).
          const moved = block.children.shift()!;
          const host = blocks.find((candidate) => candidate.children !== undefined && candidate !== block && candidate !== moved);
          if (host) host.children!.push(moved);
          else block.children.unshift(moved);
        } else block.attrs[`custom-${step}`] = 'v';
        expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
      }
    }
  });

  it('equal it through the writes a document sees most: appends to a copy, an early block changed, a block removed', () => {
    const paragraph = (i: number): Block => ({ id: `20260101000000-${String(i).padStart(7, '0')}`, type: 'paragraph', content: `paragraph ${i} 读书`, attrs: { updated: 'u' } });
    let root: Block = { id: '20260101000000-aaaaaaa', type: 'document', content: 'T', attrs: { updated: '0' }, children: Array.from({ length: 300 }, (_, i) => paragraph(i)) };
    expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
    for (let round = 1; round <= 60; round++) {
      root = cloneTree(root);
      root.attrs.updated = String(round);
      root.children!.push(paragraph(1000 + round));
      if (round % 7 === 0) root.children![round]!.content = `changed ${round}`;
      if (round % 11 === 0) root.children!.splice(round, 1);
      if (round % 13 === 0) root.children!.unshift({ id: `20260101000000-l${String(round).padStart(6, '0')}`, type: 'list', attrs: {}, children: [paragraph(2000 + round)] });
      expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
    }
  });

  it('equal it for a document with no children and for leaves at every depth', () => {
    const empty: Block = { id: '20260101000000-aaaaaaa', type: 'document', content: 'T', attrs: {}, children: [] };
    expect(documentBytes(empty).toString('utf8')).toBe(documentText(empty));
    let inner: Block = { id: '20260101000000-zzzzzzz', type: 'paragraph', content: 'deep', attrs: { updated: 'u' } };
    for (let depth = 0; depth < 12; depth++) inner = { id: `20260101000000-${String(depth).padStart(7, '0')}`, type: 'blockquote', attrs: {}, children: [inner] };
    const root: Block = { ...empty, children: [inner] };
    expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
    expect(documentBytes(root).toString('utf8')).toBe(documentText(root));
  });
});
