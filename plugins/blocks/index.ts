import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { IntentJournal, NOTEBOOK_SCOPE, WORKSPACE, definePlugin, isKernelError, isValidId, mayRead, readsAreScoped, throwIfStopped, type ActionHandler, type PluginHandlers } from '../../core/index.js';
import { canSeeNotebook, mayListProblem, otherDocumentShown, scopedCounts } from './access.js';
import { reportReturned } from './returned-notebooks.js';
import { attrActions, outlineActions, refActions, tagActions } from './link-actions.js';
import { blockActions } from './block-actions.js';
import { BlockIndex } from './block-index.js';
import { BlockStore } from './block-store.js';
import { dailynoteActions } from './dailynote-actions.js';
import { DocCatalog } from './doc-catalog.js';
import { documentActions } from './document-actions.js';
import { finishInterruptedMoves, type MoveIntent } from './document-moves.js';
import { finishInterruptedTogether, type TogetherIntent } from './write-together.js';
import { finishInterruptedRemovals, type RemovalIntent } from './document-removal.js';
import { ImportJournal, undoInterruptedImports } from './import-undo.js';
import { watchData } from './file-watcher.js';
import { openIndexDatabase, openIndexReader } from './index-schema.js';
import { readChangeMark } from './change-mark.js';
import { notebookActions } from './notebook-actions.js';
import { createNotebookScope } from './notebook-scope.js';
import { DEFAULT_CONFIG, createRuntime, type BlocksConfig } from './runtime.js';
import { exportActions, importActions } from './transfer-actions.js';
import { createWelcomeNotebook } from './welcome.js';
import { idToken, subtypeToken } from './fts-index.js';
import { Readiness } from './readiness.js';
import { syncWithFiles } from './workspace-sync.js';
import { searchText } from './search-text.js';
import { BLOCKS_INDEX } from './tokens.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WriteJournal } from './write-journal.js';

export default definePlugin<Partial<BlocksConfig>>({
  async activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const config: BlocksConfig = { ...DEFAULT_CONFIG, ...ctx.config };
    // A workspace is new when it has no data folder yet; one emptied by its owner stays empty.
    const isNew = !existsSync(workspace.dataDir);
    await mkdir(workspace.dataDir, { recursive: true });
    const indexFile = join(workspace.indexDir, 'quire.db');
    const { db, fresh } = openIndexDatabase(indexFile);
    const reader = openIndexReader(indexFile);
    const store = new BlockStore(workspace.dataDir, new BlockIndex(db, reader), new DocCatalog(), ctx.log);
    // Before anything reads data/: documents whose last writes a crash of the machine kept only in the journal.
    const { journal } = await WriteJournal.open(join(workspace.privateDir, 'journal', 'writes'), workspace.dataDir, ctx.log);
    store.useJournal(journal);
    const moves = new IntentJournal<MoveIntent>(join(workspace.privateDir, 'journal', 'moves'));
    // Before the start-up sync reads data/: a move a crash cut short is finished first.
    const finished = await finishInterruptedMoves(workspace.dataDir, moves);
    if (finished.length > 0) ctx.log.warn('finished document moves a crash had cut short', { moves: finished });
    const together = new IntentJournal<TogetherIntent>(join(workspace.privateDir, 'journal', 'together'));
    // Likewise documents written together (a block moved between two), so a block is in one of them.
    const { written, leftAlone } = await finishInterruptedTogether(workspace.dataDir, together);
    if (written.length > 0) ctx.log.warn('finished writes of documents changed together that a crash had cut short', { files: written });
    if (leftAlone.length > 0) ctx.log.warn('records of documents changed together were dropped: their files changed since', { changes: leftAlone });
    store.useTogetherJournal(together);
    const removals = new IntentJournal<RemovalIntent>(join(workspace.privateDir, 'journal', 'removals'));
    const removed = await finishInterruptedRemovals(workspace.dataDir, removals);
    if (removed.length > 0) ctx.log.warn('finished document removals a crash had cut short', { documents: removed });
    const imports = new ImportJournal(join(workspace.privateDir, 'journal', 'imports'));
    // After the journals above: the undo judges each document by its text once their changes are in.
    const undone = await undoInterruptedImports(workspace.dataDir, imports);
    if (undone.sources.length > 0) {
      ctx.log.warn('undid imports a crash had cut short; run them again', {
        imports: undone.sources, removed: undone.removed.length, notFound: undone.notFound,
        kept: undone.kept, keptWhy: 'changed since, or with documents below them that the import did not write',
      });
    }
    const rt = createRuntime(store, workspace.root, config, ctx.log, { moves, removals, imports });
    // The start-up sync runs first in the write queue, so activation stays quick however large the
    // workspace; every action waits for it, so none sees a half-synced index.
    const readiness = new Readiness(store, fresh, async (report) => {
      if (report.problems.length > 0) ctx.log.warn('some files were skipped', { count: report.problems.length });
      if (config.welcome && isNew) await createWelcomeNotebook(rt);
    }, [join(workspace.root, 'history'), join(workspace.agentDir, 'sessions'), join(workspace.root, 'assets')]);
    store.onIndexWrite = (ok) => readiness.indexWritten(ok);
    ctx.provide(NOTEBOOK_SCOPE, createNotebookScope(store, () => readiness.indexIncomplete()));
    ctx.provide(BLOCKS_INDEX, {
      file: indexFile,
      reader,
      searchText,
      ftsId: idToken,
      ftsSubtype: subtypeToken,
      notebooks: () => new Map([...store.catalog.notebooks].map(([id, conf]) => [id, { name: conf.name, access: conf.access, ...(conf.egress ? { egress: conf.egress } : {}) }])),
      onIndexed: (listener) => store.index.onIndexed(listener),
      changeMark: () => readChangeMark(store.index.reader),
      changesUnreported: () => store.index.changesUnreported(),
      ready: () => readiness.wait(),
      dataDir: workspace.dataDir,
      onBeforeChange: (listener, wants) => store.onBeforeChange(listener, wants),
      onNotebookChange: (listener) => rt.notebookNotices.on(listener),
      beforeFileChange: async (path, op, by) => {
        const id = (path.split('/').pop() ?? '').replace(/\.json$/, '');
        if (isValidId(id) && store.catalog.doc(id) && store.catalog.relativePath(id) === path) await store.beforeChange(id, op, by);
      },
      reportReturned: (call, value) => reportReturned(store, call, value),
      visibleTo: (call, notebook) => mayRead(call, notebook, store.catalog.notebooks.get(notebook)),
      withWritesPaused: <T,>(work: (ops: { syncIndex(): Promise<void> }) => Promise<T>, options?: { changesFiles?: boolean }): Promise<T> => {
        const paused = (): Promise<T> => store.queue.run(() => work({
          syncIndex: async () => {
            // Files put back and the index not: the gate must not guess from it until a sync succeeds.
            try { await syncWithFiles(store); } catch (error) { readiness.indexWritten(false); throw error; }
          },
        }));
        return options?.changesFiles ? readiness.changingFiles(paused) : paused();
      },
    });
    const watcher = config.watch ? watchData(store, () => readiness.sync(false)) : undefined;
    // Started last, right before its stop is registered: a failed activation leaves no thread behind.
    const checkpointer = WalCheckpointer.start(db, indexFile, ctx.log);
    ctx.onDispose(async () => {
      try {
        watcher?.close();
        await rt.files.close();
        await readiness.settled();
        await store.queue.idle();
        await journal.close();
      } finally {
        await checkpointer.stop();
        reader.close();
        db.close();
      }
    });
    const tools: PluginHandlers = {
      notebook: notebookActions(rt),
      document: documentActions(rt),
      block: blockActions(rt),
      attr: attrActions(rt),
      ref: refActions(rt),
      tag: tagActions(rt),
      outline: outlineActions(rt),
      dailynote: dailynoteActions(rt),
      import: importActions(rt),
      export: exportActions(rt),
      index: {
        // Stopped (time limit, cancel) before its commit, a rebuild is rolled back whole: nothing changed.
        // Its problems as index_problems shows them to the caller: the agent learns nothing of a notebook
        // hidden from it (the whole list, paths, reasons and other documents, was answered to anyone).
        rebuild: async (_input, call) => {
          const report = await readiness.sync(true, {
            stopCheck: () => throwIfStopped(call, 'The rebuild (rolled back; the index is as it was)'),
            onProgress: (done, total) => { if (done % 256 === 0 || done === total) call.progress({ done, total, message: 'documents indexed' }); },
            prepare: (docs) => rt.files.prepareRebuild(docs),
          });
          const { removedIn, ...counts } = report;
          return { ...counts, ...(readsAreScoped(call) ? scopedCounts(store, call, removedIn) : {}), problems: report.problems.filter((problem) => mayListProblem(store, call, problem.path)).map(({ path, reason, other }) => {
            const shown = otherDocumentShown(store, call, other);
            return { path, reason, ...(shown !== undefined ? { other: shown } : {}) };
          }) };
        },
        // A reader learns only of broken files in notebooks they may read, the agent of none a deny rule hides.
        problems: (_input, call) => ({
          problems: [...store.problems]
            .filter(([path]) => mayListProblem(store, call, path))
            .map(([path, problem]) => {
              const other = otherDocumentShown(store, call, problem.other);
              return { path, reason: problem.reason, ...(other !== undefined ? { otherDocument: other } : {}) };
            }),
        }),
      },
    };
    return afterReady(tools, readiness, store);
  },
});

/**
 * Every action waits for the start-up sync, and reports the notebooks whose notes its result holds
 * (from the ids in it; tags carry none, so a tag listing counts every notebook the caller may see).
 */
function afterReady(tools: PluginHandlers, readiness: Readiness, store: BlockStore): PluginHandlers {
  const out: PluginHandlers = {};
  for (const [tool, actions] of Object.entries(tools)) {
    const wrapped: Record<string, ActionHandler> = {};
    for (const [name, handler] of Object.entries(actions)) {
      wrapped[name] = async (input, call) => {
        await readiness.wait();
        let result: unknown;
        try {
          result = await handler(input, call);
        } catch (error) {
          // A conflict names its block and when it was last written: the notebook it lies in is said, so
          // that a surface holding back local-only notes holds back that too (MCP).
          if (isKernelError(error) && error.code === 'CONFLICT' && error.details !== undefined) reportReturned(store, call, error.details);
          throw error;
        }
        if (tool === 'tag' && name === 'list') call.returned([...store.catalog.notebooks.keys()].filter((id) => canSeeNotebook(store, call, id)));
        // Notebook names and counts are no notes: listing them holds back nothing (else every listing
        // would be withheld from a model off this machine as soon as one notebook is local-only).
        else if (tool === 'notebook' && name === 'list') call.returned([]);
        else reportReturned(store, call, result);
        return result;
      };
    }
    out[tool] = wrapped;
  }
  return out;
}
