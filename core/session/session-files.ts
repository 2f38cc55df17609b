import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { isValidId } from '../ids.js';
import type { JournaledKind } from './journaled-documents.js';
import type { SessionDocument } from './session-types.js';

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
  /** The checkpoints of the turn since runtime.json was last written whole (runtime-files.ts). */
  runtimeJournal(id: string): string { return join(this.folder(id), 'runtime.journal.jsonl'); }
  todos(id: string): string { return join(this.folder(id), 'todos.json'); }
  output(id: string): string { return join(this.folder(id), 'output'); }
  get index(): string { return join(this.root, 'index.json'); }
}

/**
 * A JSON file as an object, `undefined` when absent. A file that exists but does not parse is an
 * error: the caller must not overwrite what it cannot read (a person may be able to repair it).
 */
export async function readJsonObject(path: string, what: string): Promise<Record<string, unknown> | undefined> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseObject(data, what, path);
}

export async function writeJson(path: string, value: unknown): Promise<void> {
  await writeJsonAtomic(path, value);
}

/** A JSON object from a whole file's bytes; `what` names it in the error when it is not one. */
export function parseObject(data: Buffer, what: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw new KernelError('WORKSPACE_INVALID', `${what} is not valid JSON; it was left as it is`, { details: { file } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KernelError('WORKSPACE_INVALID', `${what} is not a JSON object; it was left as it is`, { details: { file } });
  return value as Record<string, unknown>;
}

/** Sessions' histories: session.json and its journal. */
export function sessionKind(paths: SessionPaths): JournaledKind<SessionDocument> {
  return {
    whole: (id) => paths.session(id), wholeName: 'session.json', journal: (id) => paths.journal(id),
    parse(data, id, file) {
      const fields = parseObject(data, `session ${id}`, file);
      return { ...fields, id, entries: Array.isArray(fields.entries) ? fields.entries as SessionDocument['entries'] : [], revision: typeof fields.revision === 'number' ? fields.revision : 0 };
    },
    toFile: (doc) => doc,
  };
}
