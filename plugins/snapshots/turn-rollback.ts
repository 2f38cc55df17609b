import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../../core/index.js';
import { applyJournaled, type FileChange, type TreeChange } from './file-change.js';
import { isAmong } from './turn-removals.js';
import { index, own, stampedBy, undoInTree } from './block-undo.js';
import { treeOf, writtenByOthers, type TreeBlock } from './turn-authorship.js';
import { isNotebookSettings, keepingPrivacy, privacyDiffers, undoSettings, undoneKeepingPrivacy } from './notebook-settings.js';
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

type BeforeWrite = (path: string, op: 'rollback' | 'remove') => Promise<void>;
/** A path's last segment: a document's file is named after its id, wherever it lies. */
const fileName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** A file's text as a snapshot holds it. */
const snapshotText = async (repo: SnapshotRepo, snapshot: Snapshot, path: string): Promise<string> => (await repo.objects.get(snapshot.files[path]!.hash)).toString('utf8');
/** A file's text in the turn's end state: its end snapshot's, or (a turn cut short) the file's as it is now. */
type ReadText = (path: string) => Promise<string>;
/** Where blocks are now, by the index: block id → the id of its document. */
type DocumentsOf = (ids: readonly string[]) => ReadonlyMap<string, string>;

/** Told which skills are about to change, before any of their files does (to keep their versions). */
type BeforeSkills = (names: string[]) => Promise<void>;

/** A diff cut down to the paths given (as an answer shows them: skill files with their prefix); all without. */
function keepOnly(diff: FileDiff, only: ReadonlySet<string> | undefined, prefix = ''): FileDiff {
  if (only === undefined) return diff;
  // A document is matched by its file's name (its id) too: a conflict is said where the document is now,
  // which is not the turn's path when someone moved it since.
  const documents = new Set(prefix === '' ? [...only].filter((path) => !path.startsWith(SKILLS_PREFIX) && !path.endsWith('/.notebook.json')).map(fileName) : []);
  const kept = (path: string) => only.has(prefix + path) || (prefix === '' && !path.endsWith('/.notebook.json') && documents.has(fileName(path)));
  return { added: diff.added.filter(kept), removed: diff.removed.filter(kept), changed: diff.changed.filter(kept) };
}
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
  const mixed = after ? await changedByOthers(repo, start, after, (path) => snapshotText(repo, after, path)) : new Set<string>();
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
    // A turn a crash (or a failed end snapshot) cut short left no record of where it ended: restoring its
    // start whole would take back all a person wrote since. What it wrote is told by the blocks' stamps
    // (`updatedBy` the turn); what no stamp tells (who removed or moved a document, changed a notebook's
    // settings or a skill file) is a conflict, undone only when forced.
    const end: Snapshot = { id: '', memo: END, created: new Date().toISOString(), origin, parent: null, tags: [], files: now.files, skills: now.skills };
    const readNow: ReadText = (path) => readFile(join(repo.dataDir, ...path.split('/')), 'utf8');
    return undoBlocks(repo, start, end, now, await changedByOthers(repo, start, end, readNow), force, before, beforeSkills, documentsOf, only, readNow);
  }
  return undoBlocks(repo, start, after, now, mixed, force, before, beforeSkills, documentsOf, only);
}

/** Whether someone other than the turn removed or moved this path while it ran (by the end snapshot's notes). */
function removedByOthers(after: Snapshot, path: string): boolean {
  return after.removedByOthers !== undefined && isAmong(path, after.removedByOthers) && !(after.removedByTurn ?? []).includes(path);
}

/** The documents in which a block changed between the turn's snapshots was written by someone else. */
async function changedByOthers(repo: SnapshotRepo, start: Snapshot, after: Snapshot, readAfter: ReadText): Promise<Set<string>> {
  const out = new Set<string>();
  const turn = repo.diff(start.files, after.files);
  const read = async (snapshot: Snapshot, path: string) => treeOf(snapshot === after ? await readAfter(path) : await snapshotText(repo, snapshot, path));
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
  documentsOf: DocumentsOf, only: ReadonlySet<string> | undefined, readUnrecorded?: ReadText): Promise<TurnRollbackResult> {
  const result: TurnRollbackResult = { mode: 'blocks', conflicts: [], undone: [] };
  const now = tables.files;
  const turn = keepOnly(repo.diff(before.files, after.files), only);
  // A turn cut short (no end snapshot): its end state is the notes as they are now, read from the files.
  const unrecorded = readUnrecorded !== undefined;
  const afterText: ReadText = readUnrecorded ?? ((path) => snapshotText(repo, after, path));
  const file = (path: string) => join(repo.dataDir, ...path.split('/'));
  // Planned whole first, then applied as one journaled change: a crash midway is finished at the next start.
  const change: FileChange = { label: `undo of turn ${after.origin}`, writes: [], removes: [] };
  const notices: [string, 'rollback' | 'remove'][] = [];
  // Documents someone else moved while the turn ran: their new paths are not the turn's to remove (a conflict if it changed them).
  const movedByOthers = new Map(Object.keys(before.files).filter((path) => removedByOthers(after, path)).map((path) => [fileName(path), path]));
  // A turn cut short: a document gone from one path and found at another moved since it began, by whom
  // no record says. Its blocks are undone where it is now (old path → new), the move is left as it is.
  const movedUnrecorded = new Map(unrecorded ? turn.removed.flatMap((path) => {
    const to = turn.added.find((added) => fileName(added) === fileName(path));
    return to === undefined ? [] : [[path, to] as const];
  }) : []);
  const movedTo = new Set(movedUnrecorded.values());
  // Who moved it no record says: the move is left, and said unless forced (its blocks are undone where it is, below).
  if (!force) for (const from of movedUnrecorded.keys()) result.conflicts.push({ path: from });
  // Where each document is now, by its file's name (its id).
  // Every notebook's settings file has the same name: never matched to another's.
  const nowAt = new Map(Object.keys(now).filter((path) => !isNotebookSettings(path)).map((path) => [fileName(path), path]));
  for (const path of turn.added) {
    if (movedTo.has(path)) continue;
    // Made by the turn and moved since by someone else: found where it is now (a turn cut short has none such).
    const at = now[path] !== undefined ? path : unrecorded || isNotebookSettings(path) ? undefined : nowAt.get(fileName(path));
    if (at === undefined) continue;
    const movedFrom = movedByOthers.get(fileName(path));
    if (movedFrom !== undefined) {
      if (after.files[path]!.hash !== before.files[movedFrom]!.hash) result.conflicts.push({ path });
      continue;
    }
    // Made since a turn cut short began, with no block of the turn's in it: someone else's, not the undo's.
    if (unrecorded && !stampedAnywhere(treeOf(await afterText(path)), after.origin)) continue;
    // A document someone else made, or added to, while the turn ran (or moved since) is not the turn's alone to remove.
    if ((mixed.has(path) || at !== path || now[at]!.hash !== after.files[path]!.hash) && !force) { result.conflicts.push({ path: at }); continue; }
    notices.push([at, 'remove']);
    change.removes.push(at);
    result.undone.push({ path: at, blocks: 0 });
  }
  // A document removed whose folder still holds documents that stay (a person's child documents) would
  // leave them without a parent, unreadable: it stays, a conflict, forced or not. Deepest first.
  for (const path of [...change.removes].sort((a, b) => b.length - a.length)) {
    const folder = `${path.replace(/\.json$/, '')}/`;
    if (!Object.keys(now).some((other) => other.startsWith(folder) && !change.removes.includes(other))) continue;
    change.removes.splice(change.removes.indexOf(path), 1);
    notices.splice(notices.findIndex(([noticed]) => noticed === path), 1);
    result.undone.splice(result.undone.findIndex((entry) => entry.path === path), 1);
    result.conflicts.push({ path });
  }
  for (const path of turn.removed) {
    // Removed while the turn ran, by someone else: left removed. Back as it was (an undo a kill cut short after its files): nothing to do.
    if (mixed.has(path) || movedUnrecorded.has(path) || now[path]?.hash === before.files[path]!.hash) continue;
    // Removed since a turn cut short began, by the turn or by someone else (no record says): theirs to decide.
    if (unrecorded && !force) { result.conflicts.push({ path }); continue; }
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
  // Blocks that were in the documents changed since the turn began, before it: a turn cut short did not
  // make one that appears elsewhere since (a person moved its container); it is never removed as the turn's.
  const olderElsewhere = new Set<string>();
  for (const path of unrecorded ? [...turn.changed, ...turn.removed].filter((changed) => !isNotebookSettings(changed)) : []) {
    const tree = treeOf(await snapshotText(repo, before, path));
    if (tree) for (const id of index(tree).keys()) olderElsewhere.add(id);
  }
  // Blocks gone from a document that are in another now: never put back here too. After a recorded turn,
  // one the turn itself put in that other document is on its way back (the turn's own move: that
  // document's undo takes it out); one a person moved there since is not (it was put back, and stayed).
  const addedByTurn = new Map<string, Set<string>>();
  for (const path of unrecorded ? [] : [...turn.changed, ...turn.added].filter((changed) => !isNotebookSettings(changed))) {
    const then = turn.changed.includes(path) ? treeOf(await snapshotText(repo, before, path)) : undefined;
    const left = treeOf(await afterText(path));
    const older = then ? index(then) : new Map();
    if (left) addedByTurn.set(fileName(path).replace(/\.json$/, ''), new Set([...index(left).keys()].filter((id) => !older.has(id))));
  }
  const wayBack = (id: string, where: string): boolean => addedByTurn.get(where)?.has(id) === true;
  // Blocks on their way back that the undo of the document they are in now keeps there (a person edited
  // one since the turn moved it): not put back, found by planning the documents once more.
  const keepAway = new Set<string>();
  const elsewhereNowOf = (start: TreeBlock, current: TreeBlock, doc: string): Set<string> => {
    const live = index(current);
    const gone = [...index(start).keys()].filter((id) => !live.has(id));
    if (gone.length === 0) return new Set();
    return new Set([...documentsOf(gone)].filter(([id, where]) => where !== doc && (unrecorded || !wayBack(id, where) || keepAway.has(id))).map(([id]) => id));
  };
  const marks = [result.conflicts.length, result.undone.length, notices.length, change.writes.length] as const;
  // Each pass keeps at least one more block away, so the passes end (one, unless such a block is found).
  for (;;) {
    // Each document's blocks once undone, and those put back into it (not in it now).
    const planned = new Map<string, ReadonlySet<string>>();
    const putBack = new Map<string, string>();
    await undoChanged(planned, putBack);
    // Where each block put back is now (one query for all), and the documents the undo removes.
    const nowIn = putBack.size === 0 ? new Map<string, string>() : documentsOf([...putBack.keys()]);
    const removedDocs = new Set(change.removes.map((path) => fileName(path).replace(/\.json$/, '')));
    const plannedIn = new Map<string, string[]>();
    for (const [doc, ids] of planned) for (const id of ids) if (putBack.has(id)) plannedIn.set(id, [...plannedIn.get(id) ?? [], doc]);
    const twice = [...putBack].filter(([id, doc]) => !keepAway.has(id) && stillElsewhere(id, doc, plannedIn.get(id) ?? [], nowIn.get(id), planned, removedDocs));
    if (twice.length === 0) break;
    for (const [id] of twice) keepAway.add(id);
    result.conflicts.length = marks[0];
    result.undone.length = marks[1];
    notices.length = marks[2];
    change.writes.length = marks[3];
  }
  /** Whether a block put back into `doc` stays in another document too: where the undo leaves it, or where it is now if that one is not undone. */
  function stillElsewhere(id: string, doc: string, plannedIn: readonly string[], now: string | undefined, planned: ReadonlyMap<string, unknown>, removedDocs: ReadonlySet<string>): boolean {
    if (plannedIn.some((other) => other !== doc)) return true;
    return now !== undefined && now !== doc && !planned.has(now) && !removedDocs.has(now);
  }
  async function undoChanged(planned: Map<string, ReadonlySet<string>>, putBack: Map<string, string>): Promise<void> {
    /** A document's blocks once undone (`tree`), and those of them it does not hold now (`live`): put back. */
    const plannedAs = (doc: string, tree: TreeBlock, live: ReadonlySet<string>): void => {
      const ids = new Set(index(tree).keys());
      planned.set(doc, ids);
      for (const id of ids) if (!live.has(id)) putBack.set(id, doc);
    };
    for (const [path, moved] of [...turn.changed.map((changed) => [changed, undefined] as const), ...movedUnrecorded]) {
      // A document moved since (after the turn, or since a turn cut short began) is undone where it is now.
      const at = moved ?? (now[path] !== undefined ? path : isNotebookSettings(path) ? undefined : nowAt.get(fileName(path)));
      if (at === undefined || now[at] === undefined) { result.conflicts.push({ path }); continue; }
      // As it was before the turn already (an undo a kill cut short after its files, or put back by hand): nothing to undo.
      if (now[at]!.hash === before.files[path]!.hash) continue;
      if (isNotebookSettings(path)) {
        // A turn cut short: who changed the settings no record says.
        const settings = unrecorded ? (force ? { conflict: false, text: undoneKeepingPrivacy(await snapshotText(repo, before, path), await readFile(file(path), 'utf8')) } : { conflict: true })
          : undoSettings(await snapshotText(repo, before, path), await afterText(path), await readFile(file(path), 'utf8'), after, path, force);
        if (settings.conflict) result.conflicts.push({ path });
        else if (settings.text !== undefined) { change.writes.push({ path, text: settings.text }); result.undone.push({ path, blocks: 0 }); }
        continue;
      }
      // A turn cut short never goes whole-file: only blocks with its stamp are known to be its.
      const mixedHere = mixed.has(path) || mixed.has(at) || moved !== undefined || unrecorded;
      // Blocks the turn moved out of this document come back with its old text: one moved on since to a
      // document where the undo leaves it would then be in two (the index skips both). Then the document
      // goes block by block, which leaves such a block where it is, a conflict, forced or not.
      // Each text read once per pass (a document of 50,000 blocks is megabytes of JSON).
      const startText = await snapshotText(repo, before, path);
      // The file is as the turn left it: its blocks now are those of the end snapshot.
      const asLeft = at === path && now[path]!.hash === after.files[path]!.hash && !mixedHere ? JSON.parse(await afterText(path)) as TreeBlock : undefined;
      const wholeFile = asLeft !== undefined && elsewhereNowOf(JSON.parse(startText) as TreeBlock, asLeft, fileName(path).replace(/\.json$/, '')).size === 0;
      if (wholeFile) {
        const written = JSON.parse(startText) as TreeBlock;
        plannedAs(written.id, written, new Set(index(asLeft).keys()));
        notices.push([path, 'rollback']);
        change.writes.push({ path, hash: before.files[path]!.hash });
        result.undone.push({ path, blocks: 0 });
        continue;
      }
      const text = await readFile(file(at), 'utf8');
      const current = JSON.parse(text) as TreeBlock;
      const start = JSON.parse(startText) as TreeBlock;
      const liveBefore = new Set(index(current).keys());
      const undone = undoInTree(start, JSON.parse(await afterText(moved ?? path)) as TreeBlock, current, after.origin, mixedHere, force, (id) => result.conflicts.push({ path: at, id }),
        { stampedOnly: unrecorded, olderElsewhere, elsewhereNow: elsewhereNowOf(start, current, fileName(at).replace(/\.json$/, '')) });
      plannedAs(current.id, current, liveBefore);
      // Nothing of the turn's left in it (only others' changes since): not rewritten, nor kept as a version.
      if (undone === 0 && `${JSON.stringify(current, null, 2)}\n` === text) continue;
      notices.push([at, 'rollback']);
      change.writes.push({ path: at, text: `${JSON.stringify(current, null, 2)}\n` });
      result.undone.push({ path: at, blocks: undone });
    }
  }
  if (before.skills && after.skills) {
    // A turn cut short: skill files carry no stamp, so a change to one since it began is the person's to judge.
    const skills = unrecorded && !force ? unjudgedSkills(repo, before.skills, after.skills, result, only) : undoSkillFiles(repo, before.skills, after.skills, tables.skills, force, result, only);
    change.skills = skills;
    await notifySkills(skillNames([...skills.writes.map((write) => write.path), ...skills.removes]));
  }
  for (const [path, op] of notices) await notify(path, op);
  await applyJournaled(repo.roots, repo.objects, repo.journal, change);
  return result;
}

/** Whether any block of a document carries the turn's stamp. */
function stampedAnywhere(tree: TreeBlock | undefined, turn: string): boolean {
  return tree !== undefined && [...index(tree).values()].some(({ block }) => stampedBy(turn, block));
}

/** Every skill file changed since a turn cut short began, as a conflict: nothing is changed. */
function unjudgedSkills(repo: SnapshotRepo, before: Record<string, FileEntry>, now: Record<string, FileEntry>, result: TurnRollbackResult, only: ReadonlySet<string> | undefined): TreeChange {
  const since = keepOnly(repo.diff(before, now), only, SKILLS_PREFIX);
  for (const path of [...since.added, ...since.removed, ...since.changed]) result.conflicts.push({ path: SKILLS_PREFIX + path });
  return { writes: [], removes: [] };
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
    if (now[path]?.hash === before[path]!.hash) continue;
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
