import { isValidId } from '../../core/index.js';
import { MAX_BLOCK_DEPTH } from './block-depth.js';
import { BLOCK_TYPES, CONTAINER_TYPES, type Block, type BlockType } from './block-model.js';

export interface FileIssue {
  /** JSON pointer into the document file. */
  pointer: string;
  message: string;
}

export type ParsedDocument = { ok: true; value: Block } | { ok: false; issues: FileIssue[] };

const KNOWN_TYPES: ReadonlySet<string> = new Set(BLOCK_TYPES);
const BLOCK_KEYS: ReadonlySet<string> = new Set(['id', 'type', 'subtype', 'content', 'checked', 'start', 'attrs', 'children']);
/** Attribute names are plain words: they become SQL values and object keys, never `__proto__`. */
export const ATTR_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** The attributes a person or the agent may set (`attr set`); the others are the system's (created, updated, updatedBy). */
export const SETTABLE_ATTR = /^(custom-[a-zA-Z0-9_-]{1,56}|name|alias|memo|bookmark)$/;

/** Parses and checks a document file's text; never throws on bad input. */
export function parseDocumentText(text: string, expectedId: string): ParsedDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, issues: [{ pointer: '', message: jsonSyntaxMessage(error) }] };
  }
  const issues: FileIssue[] = [];
  const seen = new Set<string>();
  checkBlock(value, '', 0, seen, issues);
  if (issues.length === 0) {
    const root = value as Block;
    if (root.type !== 'document') issues.push({ pointer: '/type', message: `the root block must be a document, not '${root.type}'` });
    if (root.id !== expectedId) issues.push({ pointer: '/id', message: `the document id '${root.id}' does not match its file name '${expectedId}.json'` });
    for (const [i, child] of (root.children ?? []).entries()) {
      if (child.type === 'document') issues.push({ pointer: `/children/${i}/type`, message: 'a document cannot be nested inside another document' });
    }
  }
  return issues.length === 0 ? { ok: true, value: value as Block } : { ok: false, issues: issues.slice(0, 20) };
}

function checkBlock(value: unknown, pointer: string, depth: number, seen: Set<string>, issues: FileIssue[]): void {
  if (issues.length >= 20) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ pointer, message: 'a block must be an object' });
    return;
  }
  // The limit every write checks too (block-depth.ts): what was written reads back.
  if (depth > MAX_BLOCK_DEPTH) {
    issues.push({ pointer, message: `blocks nest deeper than ${MAX_BLOCK_DEPTH} levels` });
    return;
  }
  const block = value as Record<string, unknown>;
  for (const key of Object.keys(block)) if (!BLOCK_KEYS.has(key)) issues.push({ pointer: `${pointer}/${key}`, message: `unknown field '${key}'` });
  if (!isValidId(block.id)) issues.push({ pointer: `${pointer}/id`, message: 'the id must look like YYYYMMDDhhmmss-xxxxxxx' });
  else if (seen.has(block.id)) issues.push({ pointer: `${pointer}/id`, message: `the id '${block.id}' appears twice` });
  else seen.add(block.id);
  if (typeof block.type !== 'string' || !KNOWN_TYPES.has(block.type)) {
    issues.push({ pointer: `${pointer}/type`, message: `unknown block type '${String(block.type)}'` });
    return;
  }
  checkFields(block, block.type as BlockType, pointer, issues);
  if (Array.isArray(block.children)) {
    block.children.forEach((child, i) => checkBlock(child, `${pointer}/children/${i}`, depth + 1, seen, issues));
  }
}

function checkFields(block: Record<string, unknown>, type: BlockType, pointer: string, issues: FileIssue[]): void {
  const container = CONTAINER_TYPES.has(type);
  if (container && !Array.isArray(block.children)) issues.push({ pointer: `${pointer}/children`, message: `a ${type} block needs a children array` });
  if (!container && block.children !== undefined) issues.push({ pointer: `${pointer}/children`, message: `a ${type} block cannot have children` });
  const needsContent = !container || type === 'document';
  if (needsContent && type !== 'thematicBreak' && typeof block.content !== 'string') issues.push({ pointer: `${pointer}/content`, message: `a ${type} block needs a content string` });
  if (block.content !== undefined && typeof block.content !== 'string') issues.push({ pointer: `${pointer}/content`, message: 'content must be a string' });
  if (block.subtype !== undefined && typeof block.subtype !== 'string') issues.push({ pointer: `${pointer}/subtype`, message: 'subtype must be a string' });
  if (block.checked !== undefined && typeof block.checked !== 'boolean') issues.push({ pointer: `${pointer}/checked`, message: 'checked must be true or false' });
  if (block.start !== undefined && !Number.isInteger(block.start)) issues.push({ pointer: `${pointer}/start`, message: 'start must be an integer' });
  const attrs = block.attrs;
  if (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs)) {
    issues.push({ pointer: `${pointer}/attrs`, message: 'attrs must be an object of strings' });
    return;
  }
  for (const [name, attr] of Object.entries(attrs)) {
    if (!ATTR_NAME.test(name)) issues.push({ pointer: `${pointer}/attrs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: `'${name}' is not a valid attribute name` });
    else if (typeof attr !== 'string') issues.push({ pointer: `${pointer}/attrs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: 'attribute values must be strings' });
  }
}

/**
 * Where the JSON breaks, without the text around it: the engine's message quotes the file's content,
 * which must not reach someone allowed to see only that a file is broken.
 */
export function jsonSyntaxMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const position = /position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return `not valid JSON (syntax error at character ${position})`;
  return /end of JSON/i.test(message) ? 'not valid JSON (the file ends too early)' : 'not valid JSON';
}

/** The file text: stable key order (so diffs show real changes), pretty-printed, trailing newline. */
export function documentText(root: Block): string {
  return `${JSON.stringify(ordered(root), null, 2)}\n`;
}

/** A block's fields in the file's key order (attributes sorted), children included. */
export function ordered(block: Block): Record<string, unknown> {
  const out: Record<string, unknown> = { id: block.id, type: block.type };
  if (block.subtype !== undefined) out.subtype = block.subtype;
  if (block.content !== undefined) out.content = block.content;
  if (block.checked !== undefined) out.checked = block.checked;
  if (block.start !== undefined) out.start = block.start;
  const attrs: Record<string, string> = {};
  for (const name of Object.keys(block.attrs).sort()) attrs[name] = block.attrs[name]!;
  out.attrs = attrs;
  if (block.children !== undefined) out.children = block.children.map(ordered);
  return out;
}
