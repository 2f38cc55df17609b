import { rename, rm } from 'node:fs/promises';
import { ConflictError, KernelError, newId, throwIfStopped, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { asideName } from './document-removal.js';
import { updatedBy } from './provenance.js';
import { assertNoBrokenFiles, assertNotebookVisible, canSee, invalid } from './access.js';
import { checkDisplayName, showsToReaders, type Access, type AgentAccess, type NotebookConf } from './notebook-conf.js';

/** The notebook tool. */
export function notebookActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  const name = (value: string, field = 'name'): string => {
    const problem = checkDisplayName(value, field);
    if (problem) throw invalid(problem, { field });
    return value;
  };
  const change = (call: ActionCall, id: string, fields: readonly string[], patch: (conf: NotebookConf) => NotebookConf) => store.queue.run(async () => {
    const conf = patch(assertNotebookVisible(store, call, id));
    rt.notebookNotices.tell({ notebook: id, op: 'settings', fields, by: updatedBy(call) });
    await store.writeNotebookConf(id, conf);
    return describe(id, conf);
  }, call);
  return {
    list: (_input, call) => ({
      notebooks: [...store.catalog.notebooks]
        .filter(([id, conf]) => canSee(call, conf, id))
        .sort(([a, x], [b, y]) => x.sort - y.sort || a.localeCompare(b))
        .map(([id, conf]) => ({ ...describe(id, conf), documents: store.catalog.children(id, null).length })),
    }),
    create: (input, call) => {
      const { name: given, icon, access } = input as { name: string; icon?: string; access?: Access };
      // Publishing is a person's decision (set_access is theirs only): the agent and MCP clients create private notebooks.
      if (showsToReaders(access) && (call.principal.kind === 'agent' || call.principal.kind === 'mcp')) {
        throw new KernelError('ACTION_DENIED', 'notebook_create: only a person publishes a notebook (it shows it to every reader token); create it private, and ask the person to publish it', { details: { field: 'access' } });
      }
      const conf: NotebookConf = { name: name(given), icon: icon ?? '', sort: store.catalog.notebooks.size, access: access ?? 'private' };
      // With the call: stopped while it waited (behind an import, past its time limit), it creates nothing.
      return store.queue.run(async () => {
        const id = newId();
        await store.writeNotebookConf(id, conf);
        return describe(id, conf);
      }, call);
    },
    rename: (input, call) => {
      const { id, name: given } = input as { id: string; name: string };
      return change(call, id, ['name'], (conf) => ({ ...conf, name: name(given) }));
    },
    set_access: (input, call) => {
      const { id, access } = input as { id: string; access: Access };
      return change(call, id, ['access'], (conf) => ({ ...conf, access }));
    },
    // personOnly in the manifest: the pipeline never lets the agent reach this.
    set_privacy: (input, call) => {
      const { id, agent, egress } = input as { id: string; agent?: AgentAccess; egress?: 'allowed' | 'local-only' };
      return change(call, id, ['agent', 'egress'], (conf) => {
        const { agent: _agent, egress: _egress, ...rest } = conf;
        const nextAgent = agent ?? conf.agent ?? 'write';
        const nextEgress = egress ?? conf.egress ?? 'allowed';
        return { ...rest, ...(nextAgent !== 'write' ? { agent: nextAgent } : {}), ...(nextEgress === 'local-only' ? { egress: nextEgress } : {}) };
      });
    },
    remove: (input, call) => removeNotebook(rt, call, (input as { id: string }).id),
  };
}

/** Versions written together when a notebook is removed. */
const VERSIONS_AT_ONCE = 16;

/** Removes a notebook's folder and rows, unless an import is working in it or it holds broken files. */
function removeNotebook(rt: BlocksRuntime, call: ActionCall, id: string) {
  const { store } = rt;
  assertNotebookVisible(store, call, id);
  return store.queue.run(async () => {
    // Again at its turn: a removal queued before this one may have taken it (this one answered removed).
    assertNotebookVisible(store, call, id);
    const busy = rt.busyNotebooks.get(id);
    if (busy) throw new ConflictError('CONFLICT', `Notebook '${id}' is in use by ${busy}; try again when it has finished`, { details: { notebook: id, busy } });
    assertNoBrokenFiles(store, [`${id}/`]);
    const docs = [...store.catalog.allDocs()].filter((doc) => doc.notebook === id);
    // Each document's last text kept as a 'remove' version first, as a document's own removal does (none
    // was: a deleted notebook's documents had no history). Several at a time: each is an fsync'ed write.
    const by = updatedBy(call);
    for (let at = 0; at < docs.length; at += VERSIONS_AT_ONCE) {
      // A safe point: stopped here, the notebook is whole (its versions kept so far only add history).
      throwIfStopped(call, 'The removal of the notebook (nothing was removed)');
      await Promise.all(docs.slice(at, at + VERSIONS_AT_ONCE).map((doc) => store.beforeChange(doc.id, 'remove', by)));
    }
    throwIfStopped(call, 'The removal of the notebook (nothing was removed)');
    rt.notebookNotices.tell({ notebook: id, op: 'remove', fields: [], by });
    // Set aside first (one rename): a kill during the removal leaves the notebook whole or gone, never part of it.
    const aside = asideName(store.notebookFolder(id));
    await rename(store.notebookFolder(id), aside).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error; });
    // The notebook is gone from data/ now: what a failure here leaves aside is swept at the next start.
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
    store.index.removeNotebook(id);
    for (const doc of docs) {
      store.catalog.deleteDoc(doc.id);
      store.forget(doc.id);
    }
    store.catalog.notebooks.delete(id);
    return { removed: id, documents: docs.length };
  }, call);
}

/** A notebook as actions answer it: its privacy spelled out (the file leaves defaults out). */
function describe(id: string, conf: NotebookConf) {
  const { agent, egress, ...rest } = conf;
  return { id, ...rest, agent: agent ?? 'write', egress: egress ?? 'allowed' };
}
