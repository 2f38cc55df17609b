import type { Block } from './block-model.js';
import { ordered } from './document-file.js';

/**
 * A leaf block's text in the document file, remembered on the block under a symbol key (the copy made
 * for a change carries it along, as it does the fingerprint; JSON does not write it), with the values
 * it was made from. It is used again only if the block still holds exactly those values at the same
 * depth, so a block changed in place by any code, remembering to say so or not, is written anew.
 */
const SERIALIZED = Symbol('quire.serialized');

interface Serialized {
  depth: number;
  bytes: Buffer;
  /** id, type, subtype, content, checked, start, then each attribute's name and value in key order. */
  values: unknown[];
}

type Remembered = Block & { [SERIALIZED]?: Serialized | undefined };

const NEWLINE = Buffer.from('\n');
const indents: string[] = [];
const separators: Buffer[] = [];

/** The spaces before a block's inner lines at this depth (JSON.stringify's two per level, two levels per depth). */
function indent(depth: number): string {
  return (indents[depth] ??= ' '.repeat(4 * depth));
}

/** Between two children of a block at this depth. */
function separator(depth: number): Buffer {
  return (separators[depth] ??= Buffer.from(`,\n${indent(depth + 1)}`));
}

/**
 * The document file's bytes, equal to `Buffer.from(documentText(root))` (a test holds the two equal),
 * assembled from the remembered text of unchanged leaves: saving a large document after a small change
 * serialises and encodes only what changed, instead of the whole document every time.
 */
export function documentBytes(root: Block): Buffer {
  const pieces: Buffer[] = [];
  pushBlock(root, 0, pieces);
  pieces.push(NEWLINE);
  return Buffer.concat(pieces);
}

function pushBlock(block: Block, depth: number, pieces: Buffer[]): void {
  const children = block.children;
  if (children === undefined) {
    pieces.push(leafBytes(block as Remembered, depth));
    return;
  }
  const pad = indent(depth);
  const own = JSON.stringify(ordered({ ...block, children: undefined }), null, 2);
  // Without its closing "\n}", to which the children are added as the last field.
  const head = reindent(own.slice(0, -2), pad);
  if (children.length === 0) {
    pieces.push(Buffer.from(`${head},\n${pad}  "children": []\n${pad}}`));
    return;
  }
  pieces.push(Buffer.from(`${head},\n${pad}  "children": [\n${indent(depth + 1)}`));
  for (let i = 0; i < children.length; i++) {
    if (i > 0) pieces.push(separator(depth));
    pushBlock(children[i]!, depth + 1, pieces);
  }
  pieces.push(Buffer.from(`\n${pad}  ]\n${pad}}`));
}

function leafBytes(block: Remembered, depth: number): Buffer {
  const memo = block[SERIALIZED];
  if (memo !== undefined && memo.depth === depth && holds(block, memo.values)) return memo.bytes;
  const bytes = Buffer.from(reindent(JSON.stringify(ordered(block), null, 2), indent(depth)));
  block[SERIALIZED] = { depth, bytes, values: valuesOf(block) };
  return bytes;
}

/** JSON strings hold no raw line breaks, so every line break is one of the layout's. */
function reindent(text: string, pad: string): string {
  return pad === '' ? text : text.replaceAll('\n', `\n${pad}`);
}

function valuesOf(block: Block): unknown[] {
  const values: unknown[] = [block.id, block.type, block.subtype, block.content, block.checked, block.start];
  for (const name in block.attrs) values.push(name, block.attrs[name]);
  return values;
}

function holds(block: Block, values: readonly unknown[]): boolean {
  if (values[0] !== block.id || values[1] !== block.type || values[2] !== block.subtype || values[3] !== block.content
    || values[4] !== block.checked || values[5] !== block.start) return false;
  let i = 6;
  for (const name in block.attrs) {
    if (values[i] !== name || values[i + 1] !== block.attrs[name]) return false;
    i += 2;
  }
  return i === values.length;
}
