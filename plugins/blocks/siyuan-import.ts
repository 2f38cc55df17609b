import { lstat, mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { newId, throwIfStopped, type ActionCall } from '../../core/index.js';
import type { DraftBlock } from './block-model.js';
import type { ImportDocWork } from './import-rows.js';
import { copyUnlessSame } from './file-digest.js';
import { isWithin } from './outside-workspace.js';
import { siyuanToDrafts, type SiyuanDocument } from './siyuan-sy.js';

/** What a SiYuan import kept and what it could not, for its answer. */
export interface SiyuanReport {
  documents: number;
  /** `kept`: every id is SiYuan's; `renewed`: some were in this workspace already (an earlier import), so all were given new ones, references following. */
  ids: 'kept' | 'renewed';
  references: number;
  /** References to blocks not in the import (kept; they point nowhere until those blocks arrive). */
  referencesOutside: number;
  /** `missing`: not found beside the export; `notReplaced`: a different file of that path is in the workspace already (kept). */
  assets: { linked: number; copied: number; missing: string[]; notReplaced: string[] };
  problems: { file: string; problem: string }[];
}

const MAX_LISTED = 500;
const ID = /\d{14}-[0-9a-z]{7}/g;

export interface SiyuanPlan {
  /** The id a planned document gets: its own, or a new one when the import's ids are renewed. */
  idOf(id: string): string;
  work(doc: { id: string; title: string; path: string | undefined }): Promise<ImportDocWork>;
  report(): SiyuanReport;
}

/**
 * A SiYuan export (a notebook folder of `<id>.sy` files, each document's children in the folder of its
 * id) planned before anything is written: every file read once for the ids it holds, so that the import
 * keeps SiYuan's ids, or, when any of them is in this workspace already, gives all of them new ones
 * consistently (references follow); the assets its documents use copied into `<workspace>/assets/` under
 * the same paths, so their links stay as they are.
 */
export async function planSiyuanImport(call: ActionCall, root: string, docs: { id: string; path: string }[], exists: (id: string) => boolean, workspaceRoot: string, maxChars: number): Promise<SiyuanPlan> {
  const report: SiyuanReport = { documents: 0, ids: 'kept', references: 0, referencesOutside: 0, assets: { linked: 0, copied: 0, missing: [], notReplaced: [] }, problems: [] };
  const problem = (path: string, text: string): void => { if (report.problems.length < MAX_LISTED) report.problems.push({ file: relative(root, path), problem: text }); };
  // The first read of a file reports why it cannot be read; the second, as its chunk is prepared, does not again.
  const read = async (path: string, say: boolean): Promise<SiyuanDocument | undefined> => {
    try {
      // Bounded as a Markdown file is (a .sy is JSON, some four times its text).
      const size = (await stat(path)).size;
      if (size > maxChars * 4) throw new Error(`larger than ${maxChars * 4} bytes`);
      return siyuanToDrafts(await readFile(path, 'utf8'));
    } catch (error) {
      if (say) problem(path, `${error instanceof Error ? error.message : String(error)}: imported as an empty document`);
      return undefined;
    }
  };
  const ids = new Set<string>();
  // The file where each block id is first seen: the same id in another file (two copies of an export
  // in one folder) is a block of its own there, given an id of its own.
  const firstIn = new Map<string, string>();
  const assets = new Set<string>();
  const refs: string[] = [];
  let clash = false;
  for (const [i, doc] of docs.entries()) {
    // The document's own id counts even when its file cannot be read: it becomes an empty document.
    if (ids.has(doc.id) || exists(doc.id)) clash = true;
    ids.add(doc.id);
    const parsed = await read(doc.path, true);
    if (parsed) {
      for (const id of idsOf(parsed.children)) {
        if (ids.has(id) || exists(id)) clash = true;
        ids.add(id);
        if (!firstIn.has(id)) firstIn.set(id, doc.path);
      }
      refs.push(...parsed.refs);
      for (const asset of parsed.assets) assets.add(asset);
    }
    if (i % 256 === 0) throwIfStopped(call, 'The import');
  }
  report.ids = clash ? 'renewed' : 'kept';
  const renew = new Map<string, string>();
  if (clash) for (const id of ids) renew.set(id, newId());
  report.references = refs.length;
  report.referencesOutside = refs.filter((id) => !ids.has(id)).length;
  Object.assign(report.assets, await copyAssets(root, [...assets], workspaceRoot));
  return {
    idOf: (id) => renew.get(id) ?? id,
    // The plan's ids are renewed already (transfer-actions applies idOf to every planned document and parent).
    async work(doc) {
      const { id } = doc;
      if (doc.path === undefined) return { id, title: doc.title };
      report.documents++;
      const parsed = await read(doc.path, false);
      if (!parsed) return { id, title: doc.title };
      for (const text of parsed.problems) problem(doc.path, text);
      const path = doc.path;
      const children = clash ? renewIds(parsed.children, renew, (old) => (firstIn.get(old) === path ? renew.get(old) : undefined)) : parsed.children;
      return { id, title: parsed.title || doc.title, attrs: parsed.attrs, drafts: children };
    },
    report: () => report,
  };
}

/** Every id in a tree of drafts. */
function idsOf(drafts: DraftBlock[], into: string[] = []): string[] {
  for (const draft of drafts) {
    if (draft.id) into.push(draft.id);
    if (draft.children) idsOf(draft.children, into);
  }
  return into;
}

/**
 * The drafts with the new ids (`own`: this file's new id for a block first seen in it; any other gets a
 * fresh one), references to renewed blocks following the first; others left as they are.
 */
function renewIds(drafts: DraftBlock[], renew: Map<string, string>, own: (id: string) => string | undefined): DraftBlock[] {
  return drafts.map((draft) => ({
    ...draft,
    ...(draft.id ? { id: own(draft.id) ?? newId() } : {}),
    ...(draft.content !== undefined ? { content: draft.content.replace(ID, (id) => renew.get(id) ?? id) } : {}),
    ...(draft.children ? { children: renewIds(draft.children, renew, own) } : {}),
  }));
}

/**
 * SiYuan keeps assets in `data/assets/`; an export holds them beside the notebook folder. Each path
 * used is looked for in `assets/` of the import folder and of its parents (up to the data folder),
 * and copied to the same path under `<workspace>/assets/`; one there already is left as it is.
 */
async function copyAssets(root: string, paths: string[], workspaceRoot: string): Promise<{ linked: number; copied: number; missing: string[]; notReplaced: string[] }> {
  const places = [root, dirname(root), dirname(dirname(root))].map((folder) => join(folder, 'assets'));
  const target = resolve(workspaceRoot, 'assets');
  let copied = 0;
  const missing: string[] = [];
  const notReplaced: string[] = [];
  for (const path of paths) {
    const inside = path.slice('assets/'.length);
    const destination = resolve(target, inside);
    // A path written to climb out of assets/ (`assets/../x`) is not followed.
    if (!isWithin(destination, target)) { missing.push(path); continue; }
    let source: string | undefined;
    for (const place of places) {
      const candidate = resolve(place, inside);
      if (isWithin(candidate, place) && (await stat(candidate).catch(() => undefined))?.isFile() && await leadsWithin(candidate, place)) { source = candidate; break; }
    }
    if (!source) { if (missing.length < MAX_LISTED) missing.push(path); continue; }
    await mkdir(dirname(destination), { recursive: true });
    const outcome = await copyUnlessSame(source, destination);
    if (outcome === 'copied') copied++;
    else if (outcome === 'different' && notReplaced.length < MAX_LISTED) notReplaced.push(path);
  }
  return { linked: paths.length, copied, missing, notReplaced };
}

/**
 * Whether a file found under `place` really lies there: a link in an export (`assets/a.png` pointing at
 * ~/.ssh/id_rsa) is not followed out of it, as links are nowhere else in an import.
 */
async function leadsWithin(file: string, place: string): Promise<boolean> {
  // The assets folder itself may be the link (`assets -> ~/.ssh`): it is taken where it stands, not where it leads.
  if ((await lstat(place).catch(() => undefined))?.isSymbolicLink() !== false) return false;
  const [real, realParent] = await Promise.all([realpath(file).catch(() => undefined), realpath(dirname(place)).catch(() => undefined)]);
  return real !== undefined && realParent !== undefined && isWithin(real, join(realParent, basename(place)));
}
