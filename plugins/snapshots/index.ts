import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_HEAD, IntentJournal, KernelError, WORKSPACE, definePlugin, mayReadRemoved, readsAreScoped, throwIfStopped, type ActionCall, type Principal } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { SKILLS_WRITES } from '../skills/tokens.js';
import { blockDiff } from './block-diff.js';
import { SnapshotRepo, type FileEntry, type Snapshot, type TurnNotes, type WorkHooks } from './snapshot-repo.js';
import { TURN_END, TURN_MEMOS, TURN_START, rollbackTurn } from './turn-rollback.js';
import { OthersRemovals } from './turn-removals.js';
import { keepingPrivacy } from './notebook-settings.js';
import { finishInterrupted, type FileChange } from './file-change.js';
import { reportingNotes } from '../blocks/report-notes.js';
import { deleteSnapshots, dueForRetention, pageOf, removeRecords, retentionOf } from './snapshot-removal.js';

/** Where a snapshot came from: the person who asked, or the agent's session and turn. */
function originOf(principal: Principal): string {
  return principal.kind === 'agent' ? `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}` : `${principal.kind}:${principal.name}`;
}

const AGENT_SNAPSHOTS = 'agent.snapshots';

/** The retention's pass runs at start, then after an agent's snapshot at most this often (each ends in a purge, which reads every record). */
const RETENTION_EVERY_MS = 60 * 60 * 1000;
/** A change a failure cut short (a full disk) is tried again this often until it is finished. */
const FINISH_RETRY_MS = 60_000;

/** A call's stop and progress, as the repository's hooks. */
function hooksOf(call: ActionCall, what: string, ifInterrupted?: string): WorkHooks {
  return {
    stopCheck: () => throwIfStopped(call, what),
    onProgress: (done, total, message) => call.progress({ done, total, message, ...(ifInterrupted !== undefined ? { ifInterrupted } : {}) }),
  };
}
/** What a rollback's job says when the kernel stopped while it ran (its files are journaled before the first is touched). */
const ROLLBACK_IF_INTERRUPTED = 'a rollback cut short is finished at the next start, before any note is read; the log names it';

export default definePlugin({
  activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const blocks = ctx.get(BLOCKS_INDEX);
    const journal = new IntentJournal<FileChange>(join(workspace.privateDir, 'journal', 'snapshots'));
    const auditHead = ctx.get(AUDIT_HEAD);
    const repo = new SnapshotRepo(join(workspace.root, 'repo'), workspace.dataDir, journal, () => auditHead.current(), { skillsDir: join(workspace.root, 'skills') });
    // Skill writes are held too while a snapshot reads skills/ or a rollback changes it (when the skills plugin is active).
    const skillsHeld = <T>(work: () => Promise<T>): Promise<T> => {
      const skills = ctx.find(SKILLS_WRITES);
      return skills ? skills.exclusive(work) : work();
    };
    const keepSkillVersions = (by: string) => async (names: string[]) => {
      await ctx.find(SKILLS_WRITES)?.keepVersions(names, 'rollback', by);
    };
    // Work on the repository runs one at a time: a purge must not remove the objects a snapshot in
    // progress has stored before its record refers to them, nor a tag rewrite bring back a deleted record.
    // Only what reads or changes the notes holds their writes too; a purge or a deletion lets them go on.
    let repoQueue: Promise<unknown> = Promise.resolve();
    const serial = <T>(work: () => Promise<T>): Promise<T> => {
      const run = repoQueue.then(work, work);
      repoQueue = run.catch(() => undefined);
      return run;
    };
    // The kernel closing (a one-shot CLI command, a stop) releases the workspace's lock: the repository's
    // work in flight ends first, and a retention or purge queued in the background starts nothing new.
    let closing = false;
    ctx.onDispose(async () => {
      closing = true;
      await repoQueue;
    });
    // What deleted snapshots alone referred to goes in the background: a deletion answers at once.
    const purgeLater = () => void serial(async () => {
      if (closing) return;
      const { removed } = await repo.purge();
      if (removed > 0) ctx.log.info('removed stored contents no snapshot refers to any more', { objects: removed });
    }).catch((error: unknown) => ctx.log.warn('the snapshots\' purge failed; it runs again after the next deletion, or by snapshot_purge', { error: (error as Error).message }));
    // `changesFiles`: a rollback, during which the gate waits rather than guess from the index.
    const held = <T>(work: (ops: Parameters<Parameters<typeof blocks.withWritesPaused>[0]>[0]) => Promise<T>, changesFiles = false): Promise<T> =>
      serial(() => blocks.withWritesPaused((ops) => skillsHeld(() => work(ops)), { changesFiles }));
    // A rollback a crash cut short is finished first in the write queue (after the start-up sync, before
    // any write of this run), then the index follows the files. Not awaited: activation stays quick.
    const finishPending = (what: string) => held(async (ops) => {
      const finished = await finishInterrupted(repo.roots, repo.objects, journal);
      if (finished.labels.length === 0) return;
      ctx.log.warn(what, { changes: finished.labels, ...(finished.kept.length > 0 ? { keptAsWrittenSince: finished.kept } : {}) });
      await ops.syncIndex();
    }, true);
    // A change a failure cut short (a full disk part way through a rollback) is finished as soon as it
    // can be, file by file, never over a file written since; tried again every minute until it is.
    let finishTimer: NodeJS.Timeout | undefined;
    const finishLater = (): void => {
      if (closing || finishTimer !== undefined) return;
      finishTimer = setTimeout(() => {
        finishTimer = undefined;
        finishPending('finished a change a failure had cut short').catch(() => finishLater());
      }, FINISH_RETRY_MS);
      finishTimer.unref();
    };
    ctx.onDispose(() => { clearTimeout(finishTimer); });
    /** Runs a journaled change: failed part way, the index follows what is on disk and the rest is finished later. */
    const changing = async <T>(ops: { syncIndex(): Promise<void> }, what: string, work: () => Promise<T>): Promise<T> => {
      // Only a change this work began and left pending is said to have stopped part way (another may be
      // pending already, waiting for its retry: a refusal before anything was written is said as it is).
      const before = new Set((await journal.pending()).map((entry) => entry.id));
      try {
        return await work();
      } catch (error) {
        if (!(await journal.pending()).some((entry) => !before.has(entry.id))) throw error;
        await ops.syncIndex().catch(() => undefined);
        finishLater();
        const said = error instanceof KernelError ? error : new KernelError('PLUGIN_ERROR', (error as Error).message);
        throw new KernelError(said.code, `${said.message}. ${what} stopped part way: what it wrote stays, and the rest is finished as soon as it can be written (tried every minute, and at the next start), never over a file written meanwhile`, { details: { ...said.details, unfinished: true } });
      }
    };
    // At the start: a change a crash cut short.
    finishPending('finished changes a crash had cut short').catch((error: unknown) => {
      ctx.log.error('an interrupted change could not be finished; it is tried again', { error: (error as Error).message });
      finishLater();
    });
    // `extra` is read while writes are held, right before the scan: nothing is removed between the two.
    const create = (memo: string, origin: string, hooks: WorkHooks = {}, extra: () => TurnNotes = () => ({})) =>
      held(() => repo.create(memo, origin, hooks, extra()));
    // Where blocks are now, by the index (the undo runs while writes are held: the index is the files').
    const documentsOf = (ids: readonly string[]): ReadonlyMap<string, string> => new Map((blocks.reader.prepare('SELECT id, root_id FROM blocks WHERE id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(ids)) as { id: string; root_id: string }[]).map((row) => [row.id, row.root_id]));
    // Documents others removed or moved while a turn ran, kept in its end snapshot (turn-rollback.ts).
    const othersRemovals = new OthersRemovals();
    ctx.onDispose(blocks.onBeforeChange(async (change) => { if (change.op === 'remove' || change.op === 'move') othersRemovals.note(change.by, change.op, change.path); }, (change) => change.op === 'remove' || change.op === 'move'));
    ctx.onDispose(blocks.onNotebookChange((change) => othersRemovals.note(change.by, change.op, `${change.notebook}/.notebook.json`, change.fields)));
    const retention = retentionOf(ctx.config);
    let lastRetention = Date.now();
    // The agent's turn snapshots past the retention are deleted, then what only they referred to.
    const applyRetention = () => serial(async () => {
      lastRetention = Date.now();
      if (closing) return;
      const due = dueForRetention(await repo.list(), retention!, Date.now());
      if (due.length === 0) return;
      await removeRecords(repo, due);
      ctx.log.info('removed the agent\'s turn snapshots past their retention', { snapshots: due.length });
      purgeLater();
    }).catch((error: unknown) => ctx.log.warn('the snapshots\' retention could not be applied; it is tried again later', { error: (error as Error).message }));
    if (retention) void applyRetention();
    // The turn loop asks for one snapshot before the agent's first write in a turn.
    ctx.provide(AGENT_SNAPSHOTS, {
      snapshot: async (request: { sessionId: string; turnId: string; memo: string }) => {
        const origin = `agent:${request.sessionId}/${request.turnId}`;
        if (request.memo === TURN_START) othersRemovals.turnStarted(origin);
        const notes = () => (request.memo === TURN_END ? othersRemovals.take(origin) ?? {} : {});
        const { id } = await create(request.memo, origin, {}, notes).catch((error: unknown) => {
          if (request.memo === TURN_START) othersRemovals.forget(origin);
          throw error;
        });
        if (retention && Date.now() - lastRetention >= RETENTION_EVERY_MS) void applyRetention();
        return { id };
      },
    });
    ctx.provide('agent.turn-rollback', {
      rollbackTurn: (sessionId: string, turnId: string, force: boolean, only?: readonly string[]) => held(async (ops) => {
        // Where blocks are now is read from the index (documentsOf): brought in line with the files first
        // (a hand edit the watcher has not taken in yet made a block look elsewhere, and it was lost).
        await ops.syncIndex();
        const result = await changing(ops, 'The undo of the turn', () => rollbackTurn(repo, sessionId, turnId, force, (path, op) => blocks.beforeFileChange(path, op, 'kernel:turn-rollback'), keepSkillVersions('kernel:turn-rollback'), documentsOf,
          only === undefined ? undefined : new Set(only)));
        await ops.syncIndex();
        return result;
      }, true),
    });
    // The count of files covers every notebook: a caller who may not see them all (the agent under a deny
    // rule, an MCP client) gets that of those it may see, or none where only the count is at hand (a list).
    const summary = (snapshot: { id: string; memo: string; created: string; origin: string; parent: string | null; tags: string[]; files: Record<string, FileEntry> | number; skills?: Record<string, FileEntry> }, call: ActionCall) =>
      ({ id: snapshot.id, memo: snapshot.memo, created: snapshot.created, origin: snapshot.origin, parent: snapshot.parent, tags: snapshot.tags, files: filesCount(snapshot.files, call),
        ...(snapshot.skills ? { skillFiles: Object.keys(snapshot.skills).length } : {}) });
    const filesCount = (files: Record<string, FileEntry> | number, call: ActionCall): number | null => {
      if (!readsAreScoped(call)) return typeof files === 'number' ? files : Object.keys(files).length;
      if (typeof files === 'number') return null;
      const visible = seen(call);
      return Object.keys(files).filter((path) => visible(path)).length;
    };
    const textOf = async (files: Record<string, FileEntry> | undefined, path: string): Promise<string | undefined> => {
      if (!files) return readFile(join(workspace.dataDir, ...path.split('/')), 'utf8').catch(() => undefined);
      const entry = files[path];
      return entry ? (await repo.objects.get(entry.hash)).toString('utf8') : undefined;
    };
    // What a deny rule hides from the agent stays out of what it reads of the repository too.
    // A notebook removed since: its files are shown to whoever may read what is left of removed notebooks.
    const seen = (call: ActionCall) => {
      const notebooks = blocks.notebooks();
      return (path: string) => {
        const notebook = path.split('/')[0]!;
        return blocks.visibleTo(call, notebook) || (!notebooks.has(notebook) && mayReadRemoved(call));
      };
    };
    return {
      // Readers are refused in core: the reads are adminOnly (the repository spans every notebook), the rest have effects.
      snapshot: reportingNotes(blocks, {
        create: async (input, call: ActionCall) => {
          const memo = String((input as { memo?: string }).memo ?? '');
          if (TURN_MEMOS.has(memo)) throw new KernelError('INVALID_INPUT', `the memo '${memo}' is the kernel's own, for a turn's snapshots (an undo of the turn finds them by it): choose another`, { details: { field: 'memo' } });
          return summary(await create(memo, originOf(call.principal), hooksOf(call, 'The snapshot (none was made)')), call);
        },
        list: async (input, call: ActionCall) => {
          const page = pageOf(await repo.list(), input as { limit?: number; before?: string; origin?: string });
          return { ...page, snapshots: page.snapshots.map((snapshot) => summary(snapshot, call)) };
        },
        get: async (input, call: ActionCall) => {
          const snapshot = await repo.get((input as { id: string }).id);
          const visible = seen(call);
          // A turn's notes of others' removals and renames name documents and notebooks too: the same filter.
          const { removedByOthers, removedByTurn, settingsByOthers, settingsByTurn, ...rest } = snapshot;
          const paths = (list: string[] | undefined) => (list === undefined ? {} : list.filter((path) => visible(path)));
          const settings = (map: Record<string, string[]> | undefined) => (map === undefined ? {} : Object.fromEntries(Object.entries(map).filter(([path]) => visible(path))));
          return {
            ...rest, files: Object.fromEntries(Object.entries(snapshot.files).filter(([path]) => visible(path))),
            ...(removedByOthers ? { removedByOthers: paths(removedByOthers) } : {}), ...(removedByTurn ? { removedByTurn: paths(removedByTurn) } : {}),
            ...(settingsByOthers ? { settingsByOthers: settings(settingsByOthers) } : {}), ...(settingsByTurn ? { settingsByTurn: settings(settingsByTurn) } : {}),
          };
        },
        diff: async (input, call: ActionCall) => {
          const { from, to } = input as { from: string; to?: string };
          const older = await repo.get(from);
          const newer = to !== undefined ? await repo.get(to) : await repo.scanNow();
          const before = older.files;
          const after = newer.files;
          const all = repo.diff(before, after);
          // Skills are compared when both sides hold them (snapshots taken before they were covered do not).
          const skills = older.skills && newer.skills ? repo.diff(older.skills, newer.skills) : undefined;
          const visible = seen(call);
          const files = { added: all.added.filter(visible), removed: all.removed.filter(visible), changed: all.changed.filter(visible) };
          const documents = [];
          for (const path of files.changed.filter((file) => file.endsWith('.json') && !file.endsWith('.notebook.json')).slice(0, 200)) {
            documents.push({ path, blocks: blockDiff(await textOf(before, path), await textOf(to !== undefined ? after : undefined, path)) });
          }
          return { from, to: to ?? 'now', ...files, documents, ...(skills ? { skills } : {}) };
        },
        rollback: async (input, call: ActionCall) => {
          const { id } = input as { id: string };
          const by = originOf(call.principal);
          return held(async (ops) => {
            await refuseProtectedChanges(repo, id, call);
            // Only a person sets a notebook's privacy: anyone else's rollback keeps it as it is (notebook-settings.ts).
            const hooks = hooksOf(call, 'The rollback (nothing was changed)', ROLLBACK_IF_INTERRUPTED);
            const restored = await changing(ops, 'The rollback', () => repo.rollback(id, (path, op) => blocks.beforeFileChange(path, op, by),
              call.principal.kind === 'person' ? hooks : keepingPrivacy(repo.dataDir, 'rollback', hooks), keepSkillVersions(by)));
            await ops.syncIndex();
            return { id, ...restored };
          }, true);
        },
        tag: async (input, call: ActionCall) => {
          const { id, tag } = input as { id: string; tag: string };
          return summary(await serial(() => repo.setTags(id, (tags) => [...tags, tag])), call);
        },
        untag: async (input, call: ActionCall) => {
          const { id, tag } = input as { id: string; tag: string };
          return summary(await serial(() => repo.setTags(id, (tags) => tags.filter((existing) => existing !== tag))), call);
        },
        delete: (input, call: ActionCall) => serial(async () => {
          // Its turn in the queue is a safe point: stopped while it waited, it deletes nothing.
          throwIfStopped(call, 'The deletion (nothing was deleted)');
          const deleted = await deleteSnapshots(repo, (input as { ids: string[] }).ids);
          purgeLater();
          return deleted;
        }),
        // In the repository's queue: objects a snapshot in progress has stored are not referenced by a record yet.
        purge: () => serial(() => repo.purge()),
        // In the queue: a deletion under way would show its records and objects as damaged.
        verify: () => serial(() => repo.verify()),
      }),
    };
  },
});

/**
 * A rollback rewrites every notebook at once: the agent's is refused when it would change one that it
 * may only read or that is closed to it (privacy, deny rules). Which ones is not said: a closed
 * notebook's existence is not the agent's to learn. A person's rollback is not limited.
 */
async function refuseProtectedChanges(repo: SnapshotRepo, id: string, call: ActionCall): Promise<void> {
  if (call.deniedNotebooks.size === 0 && call.readOnlyNotebooks.size === 0) return;
  const target = await repo.get(id);
  const now = await repo.scanNow();
  const changes = repo.diff(now.files, target.files);
  const touches = (path: string) => {
    const notebook = path.split('/')[0]!;
    return call.deniedNotebooks.has(notebook) || call.readOnlyNotebooks.has(notebook);
  };
  if ([...changes.added, ...changes.removed, ...changes.changed].some(touches)) {
    throw new KernelError('ACTION_DENIED', `snapshot_rollback to ${id} would change notebooks the agent may not change (their privacy setting or a deny rule); nothing was changed. A person can roll back.`, { details: { action: 'snapshot_rollback', id } });
  }
}
