import type { DependencyContainer } from 'tsyringe';
import { NOTEBOOK_SCOPE, type NotebookScope } from './notebook-scope.js';

const NONE: ReadonlySet<string> = new Set();

/** The notebooks among these whose text must not leave this machine (`egress: local-only`). */
export function localOnlyAmong(notebooks: Iterable<readonly [string, { egress?: string }]>): Set<string> {
  const out = new Set<string>();
  for (const [id, conf] of notebooks) if (conf.egress === 'local-only') out.add(id);
  return out;
}

/**
 * The egress scope, answered in one place: the notebooks whose text must not leave this machine
 * (`.notebook.json` `egress: local-only`), read now (a person may change it at any time).
 */
export function localOnlyNotebooks(container: DependencyContainer): ReadonlySet<string> {
  if (!container.isRegistered(NOTEBOOK_SCOPE, true)) return NONE;
  const out = localOnlyAmong(container.resolve<NotebookScope>(NOTEBOOK_SCOPE).privacy().map((notebook) => [notebook.id, notebook] as const));
  return out.size > 0 ? out : NONE;
}

/** Every notebook's name, by id (for what the person is shown). */
export function notebookNames(container: DependencyContainer): ReadonlyMap<string, string> {
  if (!container.isRegistered(NOTEBOOK_SCOPE, true)) return new Map();
  return new Map(container.resolve<NotebookScope>(NOTEBOOK_SCOPE).privacy().map((notebook) => [notebook.id, notebook.name]));
}
