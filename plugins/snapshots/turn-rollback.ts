import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../../core/index.js';
import { applyJournaled, type FileChange, type TreeChange } from './file-change.js';
import { isAmong } from './turn-removals.js';
import { treeOf, writtenByOthers, type TreeBlock } from './turn-authorship.js';
import { isNotebookSettings, keepingPrivacy, privacyDiffers, undoSettings } from './notebook-settings.js';
import { skillNames, type FileDiff, type FileEntry, type Snapshot, type SnapshotRepo, type Tables } from './snapshot-repo.js';

export interface TurnRollbackResult {
  /**
   * `restore`: nothing changed since the turn and nobody else wrote during it, the snapshot was restored;
   * `blocks`: only the turn's own changes were undone.
   */
  mode: 'restore' | 'blocks';
  /**
   * Blocks (or whole documents, or skill files: `skills/<name>/<file>`) changed both by the turn and
   * after it: left as they are unless forced.
   */
  conflicts: { path: string; id?: string }[];
  undone: { path: string; blocks: number }[];
}


const START = 'agent auto snapshot';
const END = 'agent turn end';
/**
 * The memos of the kernel's own snapshots of a turn, by which an undo finds them: no action may give
 * them (the agent made a snapshot named `agent turn end` part way through its turn, and every write
 * after it escaped the undo).
 */
export const TURN_MEMOS: ReadonlySet<string> = new Set([START, END]);
export const TURN_END = END;
export const TURN_START = START;

/**
 * A block's own fields (without its children and the system's time stamps), for comparing versions:
 * every write touches its document block's `updated`, which is not a change of the block's own.
 */
function own(block: TreeBlock | undefined): string | undefined {
  if (!block) return undefined;
  const { children: _children, attrs, ...rest } = block;
  const { updated: _updated, updatedBy: _by, ...kept } = (attrs ?? {}) as Record<string, unknown>;
  return JSON.stringify({ ...rest, attrs: kept });
}

function index(root: TreeBlock): Map<string, { block: TreeBlock; parent: TreeBlock | undefined; position: number }> {
  const out = new Map<string, { block: TreeBlock; parent: TreeBlock | undefined; position: number }>();
  const visit = (block: TreeBlock, parent: TreeBlock | undefined, position: number): void => {
    out.set(block.id, { block, parent, position });
    (block.children ?? []).forEach((child, i) => visit(child, block, i));
  };
  visit(root, undefined, 0);
  return out;
}

type BeforeWrite = (path: string, op: 'rollback' | 'remove') => Promise<void>;
/** A path's last segment: a document's file is named after its id, wherever it lies. */
const fileName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** A file's text as a snapshot holds it. */
const snapshotText = async (repo: SnapshotRepo, snapshot: Snapshot, path: string): Promise<string> => (await repo.objects.get(snapshot.files[path]!.hash)).toString('utf8');
/** Where blocks are now, by the index: block id → the id of its document. */
type DocumentsOf = (ids: readonly string[]) => ReadonlyMap<string, string>;

/** Blocks the turn took out of this document that are now in one the undo leaves alone: its old text would put them back a second time. */
function movedOnSince(before: TreeBlock, after: TreeBlock, path: string, turn: { changed: string[]; added: string[] }, documentsOf: DocumentsOf): string[] {
  const kept = index(after);
  const gone = [...index(before).keys()].filter((id) => !kept.has(id));
  if (gone.length === 0) return [];
  const undone = new Set([path, ...turn.changed, ...turn.added].map((file) => fileName(file).replace(/\.json$/, '')));
  return [...documentsOf(gone)].filter(([, document]) => !undone.has(document)).map(([id]) => id);
}
/** Told which skills are about to change, before any of their files does (to keep their versions). */
type BeforeSkills = (names: string[]) => Promise<void>;

/** A diff cut down to the paths given (as an answer shows them: skill files with their prefix); all without. */
const keepOnly = (diff: FileDiff, only: ReadonlySet<string> | undefined, prefix = ''): FileDiff => (only === undefined ? diff
  : { added: diff.added.filter((path) => only.has(prefix + path)), removed: diff.removed.filter((path) => only.has(prefix + path)), changed: diff.changed.filter((path) => only.has(prefix + path)) });
/** Skill files' paths as a rollback's answer shows them, apart from the notes' (which start with a notebook id). */
const SKILLS_PREFIX = 'skills/';

/**
 * Undoes one agent turn (issue 6, point 6). When the notes and skills are as the turn left them, its
 * first snapshot is restored. Otherwise only what the turn changed is undone, block by block (skill
 * file by skill file), where nobody changed it since; a block or skill file changed both by the turn
 * and later is a conflict, left as it is unless `force`. Snapshots taken before skills were covered
 * leave skills/ alone. Runs while writes to the notes and skills are held; the caller resyncs the index.
 */
export async function rollbackTurn(repo: SnapshotRepo, sessionId: string, turnId: string, force: boolean, before: BeforeWrite = async () => undefined,
  beforeSkills: BeforeSkills = async () => undefined, documentsOf: DocumentsOf = () => new Map(), only?: ReadonlySet<string>): Promise<TurnRollbackResult> {
  const origin = `agent:${sessionId}/${turnId}`;
  // Oldest first: the turn's first snapshot at its start, its last at its end.
  const mine = (await repo.list()).filter((snapshot) => snapshot.origin === origin).sort((a, b) => a.created.localeCompare(b.created));
  const startSummary = mine.find((snapshot) => snapshot.memo === START);
  if (!startSummary) throw new NotFoundError('NOT_FOUND', `turn ${turnId} of session ${sessionId} has no snapshot: it wrote nothing, or its snapshots were deleted since (by a person, or past the snapshots' retention)`, { details: { sessionId, turnId } });
  const start = await repo.get(startSummary.id);
  const afterSummary = mine.findLast((snapshot) => snapshot.memo === END);
  const after = afterSummary ? await repo.get(afterSummary.id) : undefined;
  const now = await repo.scanNow();
  const untouched = (from: Record<string, FileEntry>, to: Record<string, FileEntry>) => {
    const since = repo.diff(from, to);
    return since.added.length + since.removed.length + since.changed.length === 0;
  };
  // Documents that someone else (a person, another session) changed while the turn ran: restoring the
  // turn's first snapshot would take those changes back too, so they are undone block by block.
  const mixed = after ? await changedByOthers(repo, start, after) : new Set<string>();
  // Documents someone else removed or moved while the turn ran: not the turn's to bring back.
  if (after?.removedByOthers !== undefined) {
    for (const path of repo.diff(start.files, after.files).removed) if (removedByOthers(after, path)) mixed.add(path);
  }
  // A notebook's privacy changed while the turn ran (a person's: notebook-settings.ts), or renamed by someone else, is not restored whole.
  for (const path of after ? repo.diff(start.files, after.files).changed.filter(isNotebookSettings) : []) if (after!.settingsByOthers?.[path] || privacyDiffers(await snapshotText(repo, start, path), await snapshotText(repo, after!, path))) mixed.add(path);
  // Skills count only when the turn's end snapshot holds them: an older one says nothing about skills/.
  // `only`: an undo again of a turn undone in part goes to what the first left (its conflicts), never over what it undid.
  if (after && only === undefined && mixed.size === 0 && untouched(after.files, now.files) && (!after.skills || untouched(after.skills, now.skills))) {
    await repo.rollback(start.id, before, keepingPrivacy(repo.dataDir, 'undo'), beforeSkills);
    return { mode: 'restore', conflicts: [], undone: [] };
  }
  if (!after) {
    if (!force) return { mode: 'blocks', conflicts: [{ path: '*' }], undone: [] };
    await repo.rollback(start.id, before, keepingPrivacy(repo.dataDir, 'undo'), beforeSkills);
    return { mode: 'restore', conflicts: [], undone: [] };
  }
  return undoBlocks(repo, start, after, now, mixed, force, before, beforeSkills, documentsOf, only);
}

/** Whether someone other than the turn removed or moved this path while it ran (by the end snapshot's notes). */
function removedByOthers(after: Snapshot, path: string): boolean {
  return after.removedByOthers !== undefined && isAmong(path, after.removedByOthers) && !(after.removedByTurn ?? []).includes(path);
}

/** The documents in which a block changed between the turn's snapshots was written by someone else. */
async function changedByOthers(repo: SnapshotRepo, start: Snapshot, after: Snapshot): Promise<Set<string>> {
  const out = new Set<string>();
  const turn = repo.diff(start.files, after.files);
  const read = async (snapshot: Snapshot, path: string) => treeOf(await snapshotText(repo, snapshot, path));
  // A document moved during the turn is gone from one path and new at another, its blocks as they were:
  // compared with its old version, not taken for a new document whose blocks others wrote.
  const movedFrom = new Map(turn.removed.map((path) => [fileName(path), path]));
  for (const path of [...turn.changed, ...turn.added]) {
    const tree = await read(after, path);
    if (!tree) continue;
    const from = turn.changed.includes(path) ? path : movedFrom.get(fileName(path));
    const old = from !== undefined ? await read(start, from) : undefined;
    // A block someone else removed leaves no stamp of its own, only on the document block (which own()
    // leaves out): its stamp moved to another caller says someone else wrote to the document.
    if (old && writtenByOthers(after.origin, old, tree)) {
      out.add(path);
      continue;
    }
    const then = old ? index(old) : new Map<string, { block: TreeBlock }>();
    for (const [id, entry] of index(tree)) {
      const was = then.get(id)?.block;
      if (was && own(was) === own(entry.block)) continue;
      if (writtenByOthers(after.origin, was, entry.block)) {
        out.add(path);
        break;
      }
    }
  }
  return out;
}

async function undoBlocks(repo: SnapshotRepo, before: Snapshot, after: Snapshot, tables: Tables, mixed: ReadonlySet<string>, force: boolean, notify: BeforeWrite, notifySkills: BeforeSkills,
  documentsOf: DocumentsOf, only: ReadonlySet<string> | undefined): Promise<TurnRollbackResult> {
  const result: TurnRollbackResult = { mode: 'blocks', conflicts: [], undone: [] };
  const now = tables.files;
  const turn = keepOnly(repo.diff(before.files, after.files), only);
  const file = (path: string) => join(repo.dataDir, ...path.split('/'));
  // Planned whole first, then applied as one journaled change: a crash midway is finished at the next start.
  const change: FileChange = { label: `undo of turn ${after.origin}`, writes: [], removes: [] };
  const notices: [string, 'rollback' | 'remove'][] = [];
  // Documents someone else moved while the turn ran: their new paths are not the turn's to remove (a conflict if it changed them).
  const movedByOthers = new Map(Object.keys(before.files).filter((path) => removedByOthers(after, path)).map((path) => [fileName(path), path]));
  for (const path of turn.added) {
    if (now[path] === undefined) continue;
    const movedFrom = movedByOthers.get(fileName(path));
    if (movedFrom !== undefined) {
      if (after.files[path]!.hash !== before.files[movedFrom]!.hash) result.conflicts.push({ path });
      continue;
    }
    // A document someone else made, or added to, while the turn ran is not the turn's alone to remove.
    if ((mixed.has(path) || now[path]!.hash !== after.files[path]!.hash) && !force) { result.conflicts.push({ path }); continue; }
    notices.push([path, 'remove']);
    change.removes.push(path);
    result.undone.push({ path, blocks: 0 });
  }
  // Where each document is now, by its file's name (its id).
  const nowAt = new Map(Object.keys(now).map((path) => [fileName(path), path]));
  for (const path of turn.removed) {
    // Removed while the turn ran, by someone else: left removed.
    if (mixed.has(path)) continue;
    // Moved on since (after the turn), or its parent: written back, it would be in two places, or unfound.
    const elsewhere = nowAt.get(fileName(path));
    if (elsewhere !== undefined && elsewhere !== path && !change.removes.includes(elsewhere) && !path.endsWith('/.notebook.json')) { result.conflicts.push({ path }); continue; }
    const parent = path.split('/').length > 2 ? `${path.slice(0, path.lastIndexOf('/'))}.json` : undefined;
    const parentNow = parent === undefined ? undefined : nowAt.get(fileName(parent));
    if (parent !== undefined && parentNow !== undefined && parentNow !== parent && !change.removes.includes(parentNow)) { result.conflicts.push({ path }); continue; }
    if (now[path] !== undefined && !force) { result.conflicts.push({ path }); continue; }
    // Made again since and overwritten (forced): its text then is kept as a version first.
    if (now[path] !== undefined) notices.push([path, 'rollback']);
    change.writes.push({ path, hash: before.files[path]!.hash });
    result.undone.push({ path, blocks: 0 });
  }
  for (const path of turn.changed) {
    if (now[path] === undefined) { result.conflicts.push({ path }); continue; }
    if (isNotebookSettings(path)) {
      const settings = undoSettings(await snapshotText(repo, before, path), await snapshotText(repo, after, path), await readFile(file(path), 'utf8'), after, path, force);
      if (settings.conflict) result.conflicts.push({ path });
      else if (settings.text !== undefined) { change.writes.push({ path, text: settings.text }); result.undone.push({ path, blocks: 0 }); }
      continue;
    }
    notices.push([path, 'rollback']);
    if (now[path]!.hash === after.files[path]!.hash && !mixed.has(path)) {
      // Blocks the turn moved out of this document come back with its old text: one moved on since to a
      // document the undo does not touch would then be in two documents (the index skips both).
      const elsewhere = force ? [] : movedOnSince(JSON.parse(await snapshotText(repo, before, path)) as TreeBlock, JSON.parse(await snapshotText(repo, after, path)) as TreeBlock, path, turn, documentsOf);
      if (elsewhere.length > 0) {
        for (const id of elsewhere) result.conflicts.push({ path, id });
        continue;
      }
      change.writes.push({ path, hash: before.files[path]!.hash });
      result.undone.push({ path, blocks: 0 });
      continue;
    }
    const current = JSON.parse(await readFile(file(path), 'utf8')) as TreeBlock;
    const undone = undoInTree(JSON.parse(await snapshotText(repo, before, path)) as TreeBlock, JSON.parse(await snapshotText(repo, after, path)) as TreeBlock, current, after.origin, mixed.has(path), force, (id) => result.conflicts.push({ path, id }));
    change.writes.push({ path, text: `${JSON.stringify(current, null, 2)}\n` });
    result.undone.push({ path, blocks: undone });
  }
  if (before.skills && after.skills) {
    const skills = undoSkillFiles(repo, before.skills, after.skills, tables.skills, force, result, only);
    change.skills = skills;
    await notifySkills(skillNames([...skills.writes.map((write) => write.path), ...skills.removes]));
  }
  for (const [path, op] of notices) await notify(path, op);
  await applyJournaled(repo.roots, repo.objects, repo.journal, change);
  return result;
}

/**
 * The turn's changes to skill files, undone file by file where the file is still as the turn left
 * it (or with `force`); the others are conflicts. A skill file is small text with no blocks to merge.
 */
function undoSkillFiles(repo: SnapshotRepo, before: Record<string, FileEntry>, after: Record<string, FileEntry>, now: Record<string, FileEntry>, force: boolean, result: TurnRollbackResult, only: ReadonlySet<string> | undefined): TreeChange {
  const change: TreeChange = { writes: [], removes: [] };
  const turn = keepOnly(repo.diff(before, after), only, SKILLS_PREFIX);
  const conflict = (path: string) => result.conflicts.push({ path: SKILLS_PREFIX + path });
  const undone = (path: string) => result.undone.push({ path: SKILLS_PREFIX + path, blocks: 0 });
  for (const path of turn.added) {
    if (now[path] === undefined) continue;
    if (now[path]!.hash !== after[path]!.hash && !force) { conflict(path); continue; }
    change.removes.push(path);
    undone(path);
  }
  for (const path of [...turn.removed, ...turn.changed]) {
    // Removed by the turn and made again since, or changed by it and changed (or removed) again since.
    const expected = after[path]?.hash;
    if (now[path]?.hash !== expected && !force) { conflict(path); continue; }
    change.writes.push({ path, hash: before[path]!.hash });
    undone(path);
  }
  // A skill the turn made and someone added files to since keeps its SKILL.md: a folder of files without one is no skill.
  const removed = new Set(change.removes);
  for (const path of [...removed].filter((file) => /^[^/]+\/SKILL\.md$/.test(file))) {
    const folder = path.slice(0, -'SKILL.md'.length);
    if (!Object.keys(now).some((file) => file.startsWith(folder) && !removed.has(file))) continue;
    change.removes.splice(change.removes.indexOf(path), 1);
    result.undone.splice(result.undone.findIndex((entry) => entry.path === SKILLS_PREFIX + path), 1);
    conflict(path);
  }
  return change;
}

/**
 * Undoes, in `current`, the turn's block changes that took `before` to `after`, where `current` still
 * shows them; blocks stamped by someone else in between are not the turn's and stay, and in such a
 * (`mixed`) document a removed block is a conflict (nobody knows who removed it).
 */
function undoInTree(before: TreeBlock, after: TreeBlock, current: TreeBlock, turn: string, mixed: boolean, force: boolean, conflict: (id: string) => void): number {
  const then = index(before);
  const done = index(after);
  const live = index(current);
  let undone = 0;
  // Blocks older than the turn found inside a block the turn added (a paragraph it moved into a list sits
  // in the item the move made): they go back to where they were, never out with the added block.
  const lifted: { block: TreeBlock; parent: TreeBlock; at: number }[] = [];
  // Added blocks taken out: one inside them went with them (its older blocks were lifted with theirs).
  const removed = new Set<string>();
  const inRemoved = (id: string): boolean => {
    for (let up = live.get(id)?.parent; up; up = live.get(up.id)?.parent) if (removed.has(up.id)) return true;
    return false;
  };
  for (const [id, entry] of done) {
    const old = then.get(id);
    if (old && own(old.block) === own(entry.block)) continue;
    // Written while the turn ran, by someone else: not the turn's change, kept as it is.
    if (writtenByOthers(turn, old?.block, entry.block)) continue;
    const present = live.get(id);
    if (!present) continue;
    if (own(present.block) !== own(entry.block) && !force) { conflict(id); continue; }
    if (old) {
      // Changed by the turn: its own fields go back; its children stay as they are now.
      for (const key of Object.keys(present.block)) if (key !== 'children') delete present.block[key];
      Object.assign(present.block, { ...old.block, children: present.block.children });
      if (old.block.children === undefined) delete present.block.children;
    } else if (present.parent) {
      if (inRemoved(id)) continue;
      const { older, others } = contentsOf(present.block, then, done);
      // Each older block goes back under its old parent, which must be there (or come back below); a
      // block someone added inside it since is theirs: else the added block stays, for the person to decide.
      const returns = (block: TreeBlock): boolean => {
        const parentId = then.get(block.id)!.parent?.id;
        return parentId !== undefined && (live.has(parentId) || (!done.has(parentId) && (!mixed || force)));
      };
      if ((others && !force) || !older.every(returns)) { conflict(id); continue; }
      const at = present.parent.children!.indexOf(present.block);
      for (const block of older) lifted.push({ block, parent: present.parent, at });
      present.parent.children!.splice(at, 1);
      removed.add(id);
    }
    undone++;
  }
  const liftedIds = new Set(lifted.map(({ block }) => block.id));
  for (const [id, old] of then) {
    if (done.has(id) || live.has(id) || !old.parent) continue;
    // In a document someone else also wrote to, who removed it is unknown: it is the person's to bring back.
    if (mixed && !force) {
      conflict(id);
      continue;
    }
    // Removed by the turn and still absent: back under its parent, if that is still there.
    const parent = live.get(old.parent.id)?.block;
    if (!parent?.children) continue;
    // Without the blocks that are in the tree still, elsewhere (moved out by the turn): never twice; nor
    // those the turn left in place that someone removed since.
    parent.children.splice(Math.min(old.position, parent.children.length), 0, without(structuredClone(old.block), (block) => live.has(block.id) || liftedIds.has(block.id) || done.has(block.id)));
    undone++;
  }
  if (lifted.length > 0) {
    const now = index(current);
    for (const { block, parent: holder, at } of lifted) {
      const old = then.get(block.id)!;
      const parent = old.parent ? now.get(old.parent.id)?.block : undefined;
      if (parent?.children) {
        parent.children.splice(Math.min(old.position, parent.children.length), 0, block);
        continue;
      }
      // Its old parent is gone: it stays where the added block was, for the person to place.
      holder.children!.splice(Math.min(at, holder.children!.length), 0, block);
      conflict(block.id);
    }
  }
  return undone;
}

/**
 * What a block the turn added holds now: the outermost blocks older than the turn, and whether anything
 * is in it that is neither older nor the turn's (added by someone since).
 */
function contentsOf(block: TreeBlock, then: ReadonlyMap<string, unknown>, done: ReadonlyMap<string, unknown>): { older: TreeBlock[]; others: boolean } {
  const older: TreeBlock[] = [];
  let others = false;
  const visit = (node: TreeBlock): void => {
    for (const child of node.children ?? []) {
      if (then.has(child.id)) older.push(child);
      else if (!done.has(child.id)) others = true;
      else visit(child);
    }
  };
  visit(block);
  return { older, others };
}

/** The tree without the blocks `drop` picks (and what is inside them). */
function without(block: TreeBlock, drop: (block: TreeBlock) => boolean): TreeBlock {
  if (block.children) block.children = block.children.filter((child) => !drop(child)).map((child) => without(child, drop));
  return block;
}
