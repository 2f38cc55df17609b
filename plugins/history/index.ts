import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError, NotFoundError, WORKSPACE, definePlugin, isValidId, mayReadRemoved, readsAreScoped, stoppedNote, sweepRetention, writeFileAtomic, type ActionCall, type ActionHandler, type StopReason } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { HistoryStore, searchableText, titleOf, type Retention, type Version, type VersionInfo } from './history-store.js';
import { VersionWriter } from './version-writer.js';
import { restorePlace, type Place } from './restore-place.js';
import { keptPrivacyAllows, privacyOf, refuseOpening, type KeptPrivacy } from './version-privacy.js';
import { reportingNotes } from '../blocks/report-notes.js';
import { renewMoved } from './renew-moved.js';

interface SearchInput { query?: string; notebook?: string; op?: Version['op']; from?: string; to?: string; limit?: number }

/** The file a version belongs to, from its stored path: only ids, so a tampered version cannot point elsewhere. */
function filePath(dataDir: string, path: string): string {
  const parts = path.split('/');
  const file = parts.pop() ?? '';
  if (!file.endsWith('.json') || ![...parts, file.slice(0, -5)].every((part) => isValidId(part))) {
    throw new KernelError('INVALID_INPUT', `the version's path '${path.slice(0, 200)}' is not a document path`);
  }
  return join(dataDir, ...parts, file);
}

export default definePlugin<Partial<Retention> & { coalesceSeconds?: number }>({
  activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const blocks = ctx.get(BLOCKS_INDEX);
    const history = new HistoryStore(join(workspace.root, 'history'), { maxVersions: ctx.config.maxVersions ?? 100, maxAgeDays: ctx.config.maxAgeDays ?? 90 });
    const versions = new VersionWriter(history, (ctx.config.coalesceSeconds ?? 30) * 1000, ctx.log);
    ctx.onDispose(() => versions.flush());
    ctx.onDispose(sweepRetention((now, stopped) => history.pruneAll(now, stopped), ctx.log, 'history'));
    // Every change of a document file, from any caller, keeps the file as it was (a burst of edits, once),
    // durably before the file changes.
    const stopListening = blocks.onBeforeChange(async (change) => {
      // With the notebook's privacy then: who may read the version later depends on it too (version-privacy.ts).
      await versions.record({ documentId: change.id, op: change.op, by: change.by, notebook: change.notebook, path: change.path, hpath: change.hpath, text: change.text, ...privacyOf(blocks.notebooks().get(change.notebook)) });
    }, (change) => versions.wants(change));
    // Disabled, history keeps no more versions (each enable had added a listener that never went).
    ctx.onDispose(stopListening);
    // A version is as private as the notebook it was in, and as the one its document is in now (a document
    // moved into a notebook closed to the caller takes its past along): readers see published ones, deny rules and privacy hold.
    const currentNotebook = blocks.reader.prepare('SELECT notebook FROM blocks WHERE id = ?').pluck();
    const currentPlace = blocks.reader.prepare('SELECT notebook, path, hpath FROM blocks WHERE id = ?');
    // A notebook removed since (its documents' last texts are kept): for whoever may read what is left of one.
    const mayReadNotebook = (call: ActionCall, notebook: string) => blocks.visibleTo(call, notebook) || (mayReadRemoved(call) && !blocks.notebooks().has(notebook));
    const visible = (call: ActionCall, version: KeptPrivacy & { notebook: string }, id: string) => {
      const now = currentNotebook.get(id) as string | undefined;
      return mayReadNotebook(call, version.notebook) && (now === undefined || blocks.visibleTo(call, now)) && keptPrivacyAllows(call, version, () => blocks.notebooks());
    };
    /** The notebooks a change to this document's history would touch, that the caller may only read. */
    const readOnlyHit = (call: ActionCall, id: string, notebooks: readonly string[]) =>
      [...notebooks, currentNotebook.get(id) as string | undefined].find((notebook) => notebook !== undefined && call.readOnlyNotebooks.has(notebook));
    const readVisible = async (call: ActionCall, id: string, version: string) => {
      const notFound = () => new NotFoundError('NOT_FOUND', `No version '${version}' of document '${id}'`, { details: { id, version } });
      let found: Awaited<ReturnType<typeof history.read>>;
      try {
        found = await history.read(id, version);
      } catch (error) {
        // A version file that does not parse is said (and where it lies) only to whoever may see the
        // version by its record: to others it told that the document and the version exist.
        // Without a record to go by (an older version, its record damaged too): said to those who see everything.
        const listed = (await history.list(id).catch(() => [])).find((entry) => entry.version === version);
        if (listed === undefined ? readsAreScoped(call) : !visible(call, listed, id)) throw notFound();
        throw error;
      }
      if (!visible(call, found, id)) throw notFound();
      return found;
    };
    return {
      history: reportingNotes(blocks, afterVersions(versions, {
        list: async (input, call) => {
          const { id } = input as { id: string };
          return { versions: (await history.list(id)).filter((version) => visible(call, version, id)) };
        },
        get: async (input, call) => {
          const { id, version } = input as { id: string; version: string };
          const found = await readVisible(call, id, version);
          return { ...found, title: titleOf(found.text) };
        },
        search: async (input, call) => {
          const { query, notebook, op, from, to, limit = 50 } = input as SearchInput;
          const needle = query?.toLowerCase();
          // As instants: the strings may carry an offset or no milliseconds (the schema checks their form).
          const fromMs = from === undefined ? undefined : Date.parse(from);
          const toMs = to === undefined ? undefined : Date.parse(to);
          const results: VersionInfo[] = [];
          // A damaged version (its text cut short, edited by hand) or one pruned meanwhile is passed over, and
          // counted: either failed the whole search.
          let unreadable = 0;
          const textOf = async (doc: string, version: string): Promise<string> => {
            try {
              return searchableText((await history.read(doc, version)).text).toLowerCase();
            } catch (error) {
              const code = (error as { code?: string }).code;
              if (code !== 'WORKSPACE_INVALID' && code !== 'NOT_FOUND') throw error;
              unreadable++;
              return '';
            }
          };
          const counted = () => (unreadable > 0 ? { unreadable } : {});
          const partly = () => ({ results, truncated: true, ...counted(), message: `searched part of the history: ${stoppedNote(call.stopped as StopReason)}` });
          // Bounded: stops at `limit` results, newest documents' versions first, or at the call's stop.
          for (const id of (await history.documents()).reverse()) {
            if (call.stopped !== undefined) return partly();
            for (const version of await history.list(id)) {
              // Within a document too: a hundred versions of a large note are read whole for a query.
              if (call.stopped !== undefined) return partly();
              if ((notebook !== undefined && version.notebook !== notebook) || !visible(call, version, id)) continue;
              if (op !== undefined && version.op !== op) continue;
              const time = Date.parse(version.time);
              if ((fromMs !== undefined && time < fromMs) || (toMs !== undefined && time > toMs)) continue;
              if (needle !== undefined && !(version.title.toLowerCase().includes(needle) || (await textOf(id, version.version)).includes(needle))) continue;
              results.push(version);
              if (results.length >= limit) return { results, truncated: true, ...counted() };
            }
          }
          return { results, truncated: false, ...counted() };
        },
        rollback: async (input, call) => {
          const { id, version, notebook } = input as { id: string; version: string; notebook?: string };
          const found = await readVisible(call, id, version);
          return blocks.withWritesPaused(async (ops) => {
            // Where the document is now: a version kept before a move is put back there. Written at its old
            // path it made a second file with the same id, and the document as it was was kept nowhere.
            const placeOf = (doc: string) => currentPlace.get(doc) as Place | undefined;
            // A parent in a notebook the caller may not see is gone for it: told apart, the answers said it exists.
            const visibleParent = (doc: string) => { const place = placeOf(doc); return place && blocks.visibleTo(call, place.notebook) ? place : undefined; };
            const target = restorePlace(found, placeOf(id), notebook, visibleParent);
            const exists = existsSync(join(blocks.dataDir, target.notebook, '.notebook.json'));
            if (notebook !== undefined && (!exists || !blocks.visibleTo(call, notebook))) throw new NotFoundError('NOT_FOUND', `No notebook '${notebook}'`, { details: { field: 'notebook' } });
            // Before the visibility check: a notebook removed since is nobody's to see, and the answer was "no such version".
            if (!exists) throw new KernelError('CONFLICT', `the notebook of this version (${target.notebook}) no longer exists: give notebook to restore the document into another`, { details: { notebook: target.notebook } });
            const path = filePath(blocks.dataDir, target.path);
            if (!blocks.visibleTo(call, target.notebook)) throw new NotFoundError('NOT_FOUND', `No version '${version}' of document '${id}'`, { details: { id, version } });
            // Only where it is written (and where the document is now): the notebook it was removed from is not changed.
            const held = readOnlyHit(call, id, [target.notebook]);
            if (held !== undefined) throw new KernelError('ACTION_DENIED', `history_rollback would change notebook '${held}', which the agent may only read (its privacy setting is agent: read)`, { details: { notebook: held, privacy: 'read' } });
            refuseOpening(call, found, target.notebook, blocks.notebooks());
            const by = call.principal.kind === 'agent' ? call.principal.name : `${call.principal.kind}:${call.principal.name}`;
            if (existsSync(path)) {
              // With its notebook's privacy, as every version: without it, it was never judged written while private or local-only.
              await history.record({ documentId: id, op: 'rollback', by, notebook: target.notebook, path: target.path, hpath: target.hpath, text: await readFile(path, 'utf8'), ...privacyOf(blocks.notebooks().get(target.notebook)) });
            }
            // A block of the version that is in another document now (moved there since) is put back under
            // a new id: with its own, it was in two files, the index knew one, and the other could not be reached.
            const { text, renewed } = renewMoved(found.text, id, blocks.reader, (notebook) => blocks.visibleTo(call, notebook));
            await writeFileAtomic(path, text);
            await ops.syncIndex();
            return { id, version, restored: target.path, ...(renewed.length > 0 ? { renewed } : {}) };
          }, { changesFiles: true });
        },
        clear: async (input, call) => {
          const { id } = input as { id?: string };
          if (id === undefined && (call.deniedNotebooks.size > 0 || call.readOnlyNotebooks.size > 0)) {
            throw new KernelError('FORBIDDEN', 'clearing every document\'s history would reach notebooks this caller may not change (a deny rule or their privacy setting); clear one document at a time', { details: { field: 'id' } });
          }
          if (id !== undefined) {
            const kept = await history.list(id);
            if (kept.some((version) => !visible(call, version, id))) throw new NotFoundError('NOT_FOUND', `No history for document '${id}'`, { details: { id } });
            const held = readOnlyHit(call, id, kept.map((version) => version.notebook));
            if (held !== undefined) throw new KernelError('ACTION_DENIED', `history_clear would change the history of notebook '${held}', which the agent may only read`, { details: { notebook: held, privacy: 'read' } });
          }
          versions.forget(id === undefined ? 'all' : [id]);
          const cleared = await history.clear(id, { stopped: () => call.stopped, progress: (done, total) => call.progress({ done, total, message: 'documents cleared' }) });
          if (cleared.stopped === undefined) return cleared;
          return { ...cleared, message: `cleared the history of ${cleared.documents} of ${cleared.of ?? '?'} documents, ${stoppedNote(cleared.stopped as StopReason)}` };
        },
      })),
    };
  },
});

/** Every action sees the versions still being written in the background as written. */
function afterVersions(versions: VersionWriter, handlers: Record<string, ActionHandler>): Record<string, ActionHandler> {
  return Object.fromEntries(Object.entries(handlers).map(([name, handler]) => [name, (async (input, call) => {
    await versions.flush();
    return handler(input, call);
  }) satisfies ActionHandler]));
}
