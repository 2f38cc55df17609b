import { rm } from 'node:fs/promises';
import { ConflictError, newId, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertNoBrokenFiles, assertNotebookVisible, canSee, invalid } from './access.js';
import { checkDisplayName, type Access, type NotebookConf } from './notebook-conf.js';

/** The notebook tool. */
export function notebookActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  const name = (value: string, field = 'name'): string => {
    const problem = checkDisplayName(value, field);
    if (problem) throw invalid(problem, { field });
    return value;
  };
  const change = (call: ActionCall, id: string, patch: Partial<NotebookConf>) => store.queue.run(async () => {
    const conf = { ...assertNotebookVisible(store, call, id), ...patch };
    await store.writeNotebookConf(id, conf);
    return { id, ...conf };
  }, call);
  return {
    list: (_input, call) => ({
      notebooks: [...store.catalog.notebooks]
        .filter(([id, conf]) => canSee(call, conf, id))
        .sort(([a, x], [b, y]) => x.sort - y.sort || a.localeCompare(b))
        .map(([id, conf]) => ({ id, ...conf, documents: store.catalog.children(id, null).length })),
    }),
    create: (input) => {
      const { name: given, icon, access } = input as { name: string; icon?: string; access?: Access };
      const conf: NotebookConf = { name: name(given), icon: icon ?? '', sort: store.catalog.notebooks.size, access: access ?? 'private' };
      return store.queue.run(async () => {
        const id = newId();
        await store.writeNotebookConf(id, conf);
        return { id, ...conf };
      });
    },
    rename: (input, call) => {
      const { id, name: given } = input as { id: string; name: string };
      return change(call, id, { name: name(given) });
    },
    set_access: (input, call) => {
      const { id, access } = input as { id: string; access: Access };
      return change(call, id, { access });
    },
    remove: (input, call) => removeNotebook(rt, call, (input as { id: string }).id),
  };
}

/** Removes a notebook's folder and rows, unless an import is working in it or it holds broken files. */
function removeNotebook(rt: BlocksRuntime, call: ActionCall, id: string) {
  const { store } = rt;
  assertNotebookVisible(store, call, id);
  return store.queue.run(async () => {
    const busy = rt.busyNotebooks.get(id);
    if (busy) throw new ConflictError('CONFLICT', `Notebook '${id}' is in use by ${busy}; try again when it has finished`, { details: { notebook: id, busy } });
    assertNoBrokenFiles(store, [`${id}/`]);
    const docs = [...store.catalog.allDocs()].filter((doc) => doc.notebook === id);
    await rm(store.notebookFolder(id), { recursive: true, force: true });
    store.index.removeNotebook(id);
    for (const doc of docs) {
      store.catalog.deleteDoc(doc.id);
      store.forget(doc.id);
    }
    store.catalog.notebooks.delete(id);
    return { removed: id, documents: docs.length };
  }, call);
}
