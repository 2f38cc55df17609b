import { readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { throwIfStopped, type ActionCall } from '../../../core/index.js';
import type { ImportDocWork } from '../import-rows.js';
import { decodeNoteText } from '../note-text.js';
import { readFrontMatter } from './front-matter.js';
import { convertObsidianNote } from './obsidian-in.js';
import { ObsidianVault } from './obsidian-vault.js';

/** What an Obsidian import changed and what it could not map, for its answer. */
export interface ObsidianReport {
  notes: number;
  frontMatter: number;
  links: number;
  embeds: number;
  tags: number;
  attachments: { linked: number; copied: number; reused: number; bytes: number };
  /** `[[links]]` to notes not in the import, kept as text. */
  unresolved: { file: string; link: string }[];
  /** Links to a block (`#^id`) or a heading not found: they point at the note itself. */
  approximated: { file: string; link: string }[];
  problems: { file: string; problem: string }[];
}

/** Entries listed per kind in an answer; the counts are whole. */
const MAX_LISTED = 500;

export interface ObsidianPlan {
  work(doc: { id: string; title: string; path: string | undefined }): Promise<ImportDocWork>;
  report(): ObsidianReport & { unresolvedCount: number; approximatedCount: number };
}

/**
 * Everything a vault's notes need before the first is written: every note read once for its headings,
 * then once for its links (so heading links get their ids ahead), the attachments linked copied into
 * `assets/`. Each note is then converted again as its chunk is prepared (text is not held for the
 * whole vault). A stop before the first document is written leaves at most copied attachments.
 */
export async function planObsidianImport(call: ActionCall, root: string, notes: { id: string; path: string }[], attachments: string[], assetsFolder: string, maxChars: number): Promise<ObsidianPlan> {
  const vault = new ObsidianVault(root, notes.map((note) => ({ id: note.id, file: note.path })), attachments);
  // A note that cannot be read (removed since it was listed, a folder by that name, no permission) is
  // skipped by the planning passes and handed to the parse by its path, which says why: one such note
  // stopped the whole import.
  const readable = async (path: string): Promise<string | undefined | Error> => {
    try {
      return (await stat(path)).size > maxChars * 4 ? undefined : decodeNoteText(await readFile(path));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  for (const [i, note] of notes.entries()) {
    const text = await readable(note.path);
    if (typeof text === 'string') vault.addHeadings(note.id, readFrontMatter(text).body);
    if (i % 256 === 0) throwIfStopped(call, 'The import');
  }
  for (const [i, note] of notes.entries()) {
    const text = await readable(note.path);
    if (typeof text === 'string') convertObsidianNote(text, note.path, vault);
    if (i % 256 === 0) throwIfStopped(call, 'The import');
  }
  const copied = await vault.copyAttachments(assetsFolder);
  const report: ObsidianReport = { notes: 0, frontMatter: 0, links: 0, embeds: 0, tags: 0, attachments: { linked: 0, ...copied }, unresolved: [], approximated: [], problems: [] };
  let unresolvedCount = 0;
  let approximatedCount = 0;
  return {
    async work(doc) {
      if (doc.path === undefined) return { id: doc.id, title: doc.title };
      const text = await readable(doc.path);
      // Too large or unreadable here: the parse refuses it by its path and says why.
      if (typeof text !== 'string') return { id: doc.id, title: doc.title, path: doc.path };
      const converted = convertObsidianNote(text, doc.path, vault);
      const file = relative(root, doc.path);
      const { report: note } = converted;
      report.notes++;
      if (Object.keys(converted.attrs).length > 0) report.frontMatter++;
      report.links += note.links;
      report.embeds += note.embeds;
      report.tags += note.tags;
      report.attachments.linked += note.attachments;
      unresolvedCount += note.unresolved.length;
      approximatedCount += note.approximated.length;
      for (const link of note.unresolved) if (report.unresolved.length < MAX_LISTED) report.unresolved.push({ file, link });
      for (const link of note.approximated) if (report.approximated.length < MAX_LISTED) report.approximated.push({ file, link });
      for (const problem of note.problems) if (report.problems.length < MAX_LISTED) report.problems.push({ file, problem });
      const headingIds = vault.headingIdsOf(doc.id);
      const blockIds = vault.blockIdsOf(doc.id);
      const changed = await stat(doc.path).then((info) => new Date(Math.trunc(info.mtimeMs)).toISOString(), () => undefined);
      return { id: doc.id, title: doc.title, markdown: converted.markdown, attrs: converted.attrs, obsidian: true, ...(headingIds ? { headingIds } : {}), ...(blockIds ? { blockIds } : {}), ...(changed ? { updated: changed } : {}) };
    },
    report: () => ({ ...report, unresolvedCount, approximatedCount }),
  };
}

/** Whether a folder is an Obsidian vault (it holds `.obsidian/`). */
export async function isObsidianVault(folder: string): Promise<boolean> {
  return (await stat(join(folder, '.obsidian')).catch(() => undefined))?.isDirectory() === true;
}
