import { mkdir, realpath } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import type { Block } from '../block-model.js';
import { walkBlocks } from '../block-model.js';
import { copyAssets } from '../markdown-assets.js';
import type { PlannedFile } from '../markdown-export.js';
import { outsideWorkspace } from '../outside-workspace.js';
import { BLOCK_ID_ATTR, BLOCK_KEY } from './block-ids.js';
import { newExportReport, type ExportReport, type ExportTargets } from './obsidian-out.js';

/**
 * What an Obsidian export links to: each exported note by the name Obsidian resolves (its file name
 * when no other note has it, else its path in the export), each heading by its text, any other block
 * by its identifier (`#^key`: the one it came with from Obsidian, else its id, written after it; a list
 * item through its first paragraph); and, at the end, the `assets/` files the notes link, copied beside them.
 */
export class ObsidianTargets implements ExportTargets {
  readonly report: ExportReport = newExportReport();
  private readonly noteOf = new Map<string, string>();
  private readonly blocks = new Map<string, { doc: string; heading?: string; key?: string; firstParagraph?: string; item?: boolean }>();
  /** Blocks some exported text references (a reference in code too: it costs a marker, nothing more). */
  private readonly referenced = new Set<string>();
  /** A list item's first paragraph → the item: a link to the item is written to it. */
  private readonly itemOf = new Map<string, string>();

  constructor(planned: readonly PlannedFile[], private readonly folder: string) {
    const counts = new Map<string, number>();
    for (const { file } of planned) counts.set(basename(file).toLowerCase(), (counts.get(basename(file).toLowerCase()) ?? 0) + 1);
    for (const { file, doc } of planned) {
      const name = counts.get(basename(file).toLowerCase()) === 1 ? basename(file) : relative(folder, file).split(sep).join('/');
      this.noteOf.set(doc, name.replace(/\.md$/i, ''));
    }
  }

  /** Indexes a document's blocks (every document is read before any file is written). */
  add(root: Block): void {
    // An identifier two blocks of the note share (as a vault may hold) names neither: a link to one of
    // them went to the other. Each of them is then linked by its own id.
    const counts = new Map<string, number>();
    for (const { block } of walkBlocks(root)) {
      const own = block.attrs[BLOCK_ID_ATTR];
      if (own !== undefined) counts.set(own, (counts.get(own) ?? 0) + 1);
    }
    for (const { block } of walkBlocks(root)) {
      const own = block.attrs[BLOCK_ID_ATTR];
      const first = block.type === 'listItem' && block.children?.[0]?.type === 'paragraph' ? block.children[0].id : undefined;
      if (first !== undefined) this.itemOf.set(first, block.id);
      this.blocks.set(block.id, {
        doc: root.id, ...(block.type === 'heading' ? { heading: block.content ?? '' } : {}),
        ...(own !== undefined && BLOCK_KEY.test(own) && counts.get(own) === 1 ? { key: own } : {}),
        ...(first !== undefined ? { firstParagraph: first } : {}), ...(block.type === 'listItem' ? { item: true } : {}),
      });
      if (block.type !== 'document' && block.content?.includes('((')) for (const match of block.content.matchAll(REF_ID)) this.referenced.add(match[1]!);
    }
  }

  /** A block's identifier in the export (once every document is added), or undefined: it needs none. */
  keyOf(id: string): string | undefined {
    const found = this.blocks.get(id);
    // A list item is linked through its first paragraph; one without has no place for a marker.
    if (!found || found.heading !== undefined || found.doc === id || found.item) return undefined;
    if (found.key !== undefined) return found.key;
    const item = this.itemOf.get(id);
    return this.referenced.has(id) || (item !== undefined && this.referenced.has(item)) ? id : undefined;
  }

  target(id: string): { note: string; heading?: string; block?: string; isDocument: boolean } | undefined {
    const found = this.blocks.get(id);
    const note = found && this.noteOf.get(found.doc);
    if (!found || note === undefined) return undefined;
    const block = this.keyOf(found.firstParagraph ?? id);
    return { note, isDocument: found.doc === id, ...(found.heading !== undefined ? { heading: found.heading } : {}), ...(block !== undefined ? { block } : {}) };
  }

  /**
   * `assets/` and `.obsidian/` already in the folder (a link into the workspace among them) are checked
   * where they really lead before any note is written: found only at `finish`, the export was refused
   * with its notes already written.
   */
  async checkBeforeWriting(workspaceRoot: string): Promise<void> {
    for (const name of ['assets', '.obsidian']) {
      const real = await realpath(join(this.folder, name)).catch(() => undefined);
      if (real !== undefined) await outsideWorkspace(real, workspaceRoot, 'folder', { writes: true });
    }
  }

  /**
   * Copies the linked attachments into `<folder>/assets/` and marks the folder a vault (`.obsidian/`).
   * A file there already with other bytes is replaced only with `overwrite`; otherwise it is listed.
   */
  async finish(workspaceRoot: string, overwrite: boolean): Promise<Record<string, unknown>> {
    const { copied, missing, kept } = this.report.assets.size > 0 ? await copyAssets(this.folder, workspaceRoot, this.report.assets, overwrite) : { copied: 0, missing: [], kept: [] };
    await mkdir(join(this.folder, '.obsidian'), { recursive: true });
    await outsideWorkspace(await realpath(join(this.folder, '.obsidian')), workspaceRoot, 'folder', { writes: true });
    const { links, approximated, outside, tagsKept } = this.report;
    return {
      links, approximated, outside, tagsKept, attachments: { linked: this.report.assets.size, copied },
      ...(missing.length > 0 ? { missingAttachments: missing.slice(0, 500) } : {}),
      ...(kept.length > 0 ? { attachmentsNotReplaced: kept.slice(0, 500) } : {}),
    };
  }
}

const REF_ID = /\(\((\d{14}-[0-9a-z]{7})/g;
