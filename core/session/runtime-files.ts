import { rm } from 'node:fs/promises';
import { KernelError } from '../errors.js';
import { JournaledDocuments } from './journaled-documents.js';
import { parseObject, type SessionPaths } from './session-files.js';
import type { JournalDocument } from './session-journal.js';
import type { ActiveTurn, RuntimeFile } from './session-types.js';

/**
 * runtime.json as the journal keeps it: the turn's messages (`activeTurn.delta`, which grow at their
 * end as a turn goes on) are the entries, and the rest of the turn a field. A checkpoint then appends
 * what changed since the one before (the round under way), not the whole turn again: a turn that
 * rewrote its file at each of its checkpoints wrote the square of its length.
 */
type RuntimeDocument = JournalDocument & { activeTurn?: Omit<ActiveTurn, 'delta'> };

function toDocument(runtime: RuntimeFile): RuntimeDocument {
  const { activeTurn, ...fields } = runtime;
  if (typeof activeTurn !== 'object' || activeTurn === null) return { ...fields, entries: [] };
  const { delta, ...turn } = activeTurn;
  return { ...fields, activeTurn: turn, entries: Array.isArray(delta) ? delta : [] };
}

function fromDocument(doc: RuntimeDocument): RuntimeFile {
  const { entries, activeTurn, ...fields } = doc;
  return (activeTurn === undefined ? fields : { ...fields, activeTurn: { ...activeTurn, delta: entries } }) as RuntimeFile;
}

function parseRuntime(data: Buffer, id: string, file: string): RuntimeDocument {
  const value = parseObject(data, `the runtime of session ${id}`, file);
  if (typeof value.schemaVersion === 'number' && value.schemaVersion > 1) {
    throw new KernelError('WORKSPACE_INVALID', `the runtime of session ${id} was written by a newer kernel (schema ${value.schemaVersion})`, { details: { file } });
  }
  if (value.sessionID !== undefined && value.sessionID !== id) throw new KernelError('WORKSPACE_INVALID', `the runtime file of session ${id} belongs to session ${String(value.sessionID)}`, { details: { file } });
  // A revision that is not a number (a hand edit) counts as 0, as session.json's does: the next write must follow it.
  return toDocument({ schemaVersion: 1, permissionMode: 'confirm', ...value, revision: typeof value.revision === 'number' ? value.revision : 0, sessionID: id } as RuntimeFile);
}

/**
 * The sessions' runtime files (runtime.json and runtime.journal.jsonl), held in memory like their
 * histories. What is read is frozen: a caller changes a copy. The caller serialises the work on one session.
 */
export class RuntimeFiles {
  readonly documents: JournaledDocuments<RuntimeDocument>;

  constructor(private readonly paths: SessionPaths) {
    this.documents = new JournaledDocuments<RuntimeDocument>({
      whole: (id) => paths.runtime(id), wholeName: 'runtime.json', journal: (id) => paths.runtimeJournal(id),
      parse: parseRuntime, toFile: fromDocument,
    });
  }

  /** Removes a runtime left without its session (a removal a crash cut short), so that a new session of that id starts without it. */
  async remove(id: string): Promise<void> {
    this.documents.forget(id, true);
    await rm(this.paths.runtimeJournal(id), { force: true });
    await rm(this.paths.runtime(id), { force: true });
  }

  async read(id: string): Promise<RuntimeFile | undefined> {
    const doc = await this.documents.current(id);
    return doc && fromDocument(doc);
  }

  /** Stores `runtime` as the next revision (whatever revision it carries: the one after the stored one). */
  async write(id: string, runtime: RuntimeFile): Promise<RuntimeFile> {
    const doc = await this.documents.write(id, (stored) => toDocument({ ...runtime, schemaVersion: 1, sessionID: id, revision: (stored?.revision ?? 0) + 1 }));
    return fromDocument(doc);
  }
}
