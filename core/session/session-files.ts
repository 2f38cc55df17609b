import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { isValidId } from '../ids.js';
import type { RuntimeFile } from './session-types.js';

/** The files of one session; the id is checked before it becomes a path. */
export class SessionPaths {
  constructor(readonly root: string) {}

  folder(id: string): string {
    if (!isValidId(id)) throw new KernelError('INVALID_INPUT', `invalid session id '${String(id).slice(0, 40)}'`, { details: { field: 'id' } });
    return join(this.root, id);
  }

  session(id: string): string { return join(this.folder(id), 'session.json'); }
  /** The saves since session.json was last written whole, one line each (session-journal.ts). */
  journal(id: string): string { return join(this.folder(id), 'session.journal.jsonl'); }
  runtime(id: string): string { return join(this.folder(id), 'runtime.json'); }
  todos(id: string): string { return join(this.folder(id), 'todos.json'); }
  output(id: string): string { return join(this.folder(id), 'output'); }
  get index(): string { return join(this.root, 'index.json'); }
}

/**
 * A JSON file as an object, `undefined` when absent. A file that exists but does not parse is an
 * error: the caller must not overwrite what it cannot read (a person may be able to repair it).
 */
export async function readJsonObject(path: string, what: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new KernelError('WORKSPACE_INVALID', `${what} is not valid JSON; it was left as it is`, { details: { file: path } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KernelError('WORKSPACE_INVALID', `${what} is not a JSON object; it was left as it is`, { details: { file: path } });
  return value as Record<string, unknown>;
}

export async function readRuntime(paths: SessionPaths, id: string): Promise<RuntimeFile | undefined> {
  const value = await readJsonObject(paths.runtime(id), `the runtime of session ${id}`);
  if (!value) return undefined;
  if (typeof value.schemaVersion === 'number' && value.schemaVersion > 1) {
    throw new KernelError('WORKSPACE_INVALID', `the runtime of session ${id} was written by a newer kernel (schema ${value.schemaVersion})`, { details: { file: paths.runtime(id) } });
  }
  if (value.sessionID !== undefined && value.sessionID !== id) throw new KernelError('WORKSPACE_INVALID', `the runtime file of session ${id} belongs to session ${String(value.sessionID)}`);
  return { schemaVersion: 1, revision: 0, permissionMode: 'confirm', ...value, sessionID: id } as RuntimeFile;
}

export async function writeJson(path: string, value: unknown): Promise<void> {
  await writeJsonAtomic(path, value);
}
