/**
 * An import's documents made ready to write, on a parse worker: each file parsed, its blocks given ids
 * and stamps, its file text serialised, and every index row it yields derived (block rows, attributes,
 * references, tags, full-text values), so that the main thread only writes files and runs inserts.
 * Pure functions of their input, the same on a worker and on the main thread (tests run them inline).
 */
import { statSync } from 'node:fs';
import type { Block, DraftBlock } from './block-model.js';
import { documentText } from './document-file.js';
import { ftsBlockValues, type FtsBlockValues } from './fts-index.js';
import { deriveBlock, type DocumentPlace } from './index-rows.js';
import { parseMarkdownFile, parseMarkdownSource } from './markdown-parser.js';
import { obsidianCallouts } from './obsidian/callouts.js';
import { headingKey } from './obsidian/heading-key.js';
import { assignBlockIds } from './obsidian/block-ids.js';
import { stampNew } from './provenance.js';
import { materialise } from './tree-ops.js';
import { copyLinkedAttachments, type AttachmentPlace } from './markdown-attachments.js';

export interface ImportDocWork {
  id: string;
  title: string;
  /** The Markdown file; none for a folder without one (an empty document). */
  path?: string;
  /** The Markdown itself, read and converted on the main thread (an Obsidian note): used instead of `path`. */
  markdown?: string;
  /** The document block's own attributes (an Obsidian note's front matter). */
  attrs?: Record<string, string>;
  /** Ids given out ahead for headings other documents link to: heading key (headingKey) → id. */
  headingIds?: Record<string, string>;
  /** An Obsidian note's block identifiers (`^abc`) that links were given ids for: identifier → id. */
  blockIds?: Record<string, string>;
  /** Read as Obsidian writes: its callouts (`[!info]- Title`). */
  obsidian?: boolean;
  /** Blocks ready made, their ids kept (a SiYuan document): used instead of `path` and `markdown`. */
  drafts?: DraftBlock[];
  /**
   * When the source was last changed (ISO; an Obsidian note's file): the time of change of its blocks
   * that have none of their own. A `path`'s file gives its own.
   */
  updated?: string;
}

export interface ImportWork {
  docs: ImportDocWork[];
  /** A plain Markdown import: the local files its notes link are copied into the workspace (markdown-attachments.ts). */
  attachments?: AttachmentPlace;
  maxChars: number;
  /** updatedBy of every block. */
  by: string;
  /** The import's time: created and updated of every block its source gives no time of change. */
  now: string;
}

/**
 * A block row's own values: those of its document's place (root_id, notebook, path, hpath) are the
 * same for all its blocks, and added by the main thread, which knows the place from its catalog.
 */
export type BlockValues = [id: string, parentId: string | null, type: string, subtype: string | null, content: string, markdown: string | null,
  sort: number, created: string | null, updated: string | null, updatedBy: string | null, fingerprint: string, checked: 0 | 1 | null];

export interface PreparedBlock {
  values: BlockValues;
  fts: FtsBlockValues;
  /** Left out when empty (most blocks): fewer objects to copy between threads and to collect. */
  attrs?: [string, string][];
  refs?: [string, string | null][];
  tags?: string[];
}

/** A document's index rows, made off the main thread. */
export interface PreparedRows {
  id: string;
  title: string;
  /** Its blocks, the document block first, in the order the index writes them (parents first). */
  blocks: PreparedBlock[];
}

export interface PreparedDocument extends PreparedRows {
  /** The document file's text. */
  text: string;
  /** Why the file became an empty document, if it did. */
  problem?: string;
  /** What of the file was read otherwise than as written (front matter kept as text). */
  note?: string;
  /** Headings given an id ahead that the parse did not find (links to them point nowhere). */
  unplacedHeadings?: string[];
  /** Block identifiers (`^abc`) links point to that no block of the note took (the links lead nowhere). */
  unplacedBlocks?: string[];
  /** Links to local files that now point into `assets/`, the files copied there (a plain Markdown import). */
  attachmentLinks?: number;
  /** Local links left as written: outside the folder imported, missing, or too large. */
  linksLeft?: string[];
}

export function prepareImport(work: ImportWork): PreparedDocument[] {
  const now = new Date(work.now);
  return work.docs.map((doc) => prepareDocument(doc, work.maxChars, work.by, now, work.attachments));
}

function prepareDocument(doc: ImportDocWork, maxChars: number, by: string, now: Date, attachments: AttachmentPlace | undefined): PreparedDocument {
  let drafts: DraftBlock[] = [];
  let problem: string | undefined;
  let frontMatter: Record<string, string> | undefined;
  let note: string | undefined;
  if (doc.drafts !== undefined) drafts = doc.drafts;
  else if (doc.markdown !== undefined || doc.path !== undefined) {
    const parsed = doc.markdown !== undefined ? parseMarkdownSource(doc.markdown, maxChars) : parseMarkdownFile(doc.path!, maxChars);
    // A file that cannot be imported still becomes its (empty) document, so that the documents of
    // its folder keep their parent.
    if (parsed.ok) drafts = doc.obsidian === true ? obsidianCallouts(parsed.drafts) : parsed.drafts;
    else problem = parsed.reason;
    // A plain Markdown file's front matter (an Obsidian note's was read before, into doc.attrs).
    if (parsed.ok) frontMatter = parsed.attrs;
    if (parsed.ok && parsed.note !== undefined) note = parsed.note;
  }
  const linked = attachments && doc.path !== undefined && doc.markdown === undefined ? copyLinkedAttachments(drafts, doc.path, attachments) : undefined;
  const unplaced = doc.headingIds ? assignHeadingIds(drafts, new Map(Object.entries(doc.headingIds))) : [];
  const unplacedBlocks = doc.obsidian === true ? assignBlockIds(drafts, new Map(Object.entries(doc.blockIds ?? {}))) : [];
  const root: Block = { id: doc.id, type: 'document', content: doc.title, attrs: { ...frontMatter, ...doc.attrs }, children: [] };
  // The times of change the source gives (a SiYuan block's own, else its file's) are kept: an import
  // stamped years of notes with the day they came in.
  const sourceUpdated = doc.updated ?? (doc.path !== undefined ? fileUpdated(doc.path) : undefined);
  if (sourceUpdated !== undefined) {
    root.attrs.updated ??= sourceUpdated;
    defaultUpdated(drafts, sourceUpdated);
  }
  stampNew(root, by, now, true);
  root.children = materialise(drafts.length > 0 ? drafts : [{ type: 'paragraph', content: '' }], by, now, true);
  const prepared: PreparedDocument = { id: doc.id, title: doc.title, text: documentText(root), blocks: prepareBlocks(root) };
  if (problem !== undefined) prepared.problem = problem;
  if (note !== undefined) prepared.note = note;
  if (unplaced.length > 0) prepared.unplacedHeadings = unplaced;
  if (unplacedBlocks.length > 0) prepared.unplacedBlocks = unplacedBlocks;
  if (linked && linked.linked > 0) prepared.attachmentLinks = linked.linked;
  if (linked && linked.left.length > 0) prepared.linksLeft = linked.left;
  return prepared;
}

/** A file's time of change (ISO), if it can be read. */
function fileUpdated(path: string): string | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  return info === undefined ? undefined : new Date(Math.trunc(info.mtimeMs)).toISOString();
}

/** Gives drafts without a time of change of their own this one. */
function defaultUpdated(drafts: DraftBlock[], updated: string): void {
  for (const draft of drafts) {
    if (draft.attrs?.updated === undefined) draft.attrs = { ...draft.attrs, updated };
    if (draft.children) defaultUpdated(draft.children, updated);
  }
}

/** Gives the first heading matching each key its id; returns the keys no heading matched. */
function assignHeadingIds(drafts: DraftBlock[], ids: Map<string, string>): string[] {
  const visit = (list: DraftBlock[]): void => {
    for (const draft of list) {
      if (ids.size === 0) return;
      if (draft.type === 'heading') {
        const key = headingKey(draft.content ?? '');
        const id = ids.get(key);
        if (id !== undefined) {
          draft.id = id;
          ids.delete(key);
        }
      }
      if (draft.children) visit(draft.children);
    }
  };
  visit(drafts);
  return [...ids.keys()];
}

/** The place columns are not the block's own: left empty here (see BlockValues). */
const NO_PLACE: DocumentPlace = { notebook: '', path: '', hpath: '' };

/** Every row of a document's blocks, as BlockIndex.writeDocument derives them for a new document. */
export function prepareBlocks(root: Block): PreparedBlock[] {
  const blocks: PreparedBlock[] = [];
  const visit = (block: Block, parentId: string | null, sort: number): void => {
    const { row, attrs, refs, tags } = deriveBlock(block, root.id, parentId, sort, NO_PLACE);
    const prepared: PreparedBlock = {
      values: [row.id, row.parent_id, row.type, row.subtype, row.content, row.markdown, row.sort, row.created, row.updated, row.updated_by, row.fingerprint, row.checked],
      fts: ftsBlockValues({ content: row.content, attrs, tags, subtype: row.subtype }),
    };
    if (attrs.length > 0) prepared.attrs = attrs;
    if (refs.length > 0) prepared.refs = refs.map((ref) => [ref.def, ref.anchor]);
    if (tags.length > 0) prepared.tags = tags;
    blocks.push(prepared);
    const children = block.children;
    if (children) for (let i = 0; i < children.length; i++) visit(children[i]!, block.id, i);
  };
  visit(root, null, 0);
  return blocks;
}
