import { inject, injectable } from '../di.js';
import { GRANTS_STORE, WORKSPACE } from '../core-tokens.js';
import { ConflictError, KernelError, NotFoundError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { newId } from '../ids.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import type { Confirmation, ConfirmationAnswer } from './confirmation.js';
import type { GrantsStore } from './grants-store.js';

export type NewConfirmation = Omit<Confirmation, 'id' | 'createdAt' | 'status'> & { id?: string };

interface ConfirmationsFile {
  version: 1;
  confirmations: Confirmation[];
}

/** Answered confirmations kept for the record; older ones are dropped. */
const KEEP_ANSWERED = 200;

/**
 * Pending confirmations, persisted so that a restart does not lose them. Exactly one answer is accepted,
 * and only for the arguments the person saw; an approval is consumed by exactly one execution.
 */
@injectable()
export class ConfirmationStore {
  private items = new Map<string, Confirmation>();
  private readonly waiters = new Map<string, Set<(confirmation: Confirmation) => void>>();
  private readonly queue = new SerialQueue();

  constructor(
    @inject(WORKSPACE) private readonly workspace: Workspace,
    @inject(GRANTS_STORE) private readonly grants: GrantsStore,
  ) {}

  async load(): Promise<void> {
    const file = await readJsonFile<ConfirmationsFile>(this.workspace.confirmationsFile, { version: 1, confirmations: [] });
    if (!Array.isArray(file.confirmations)) {
      throw new KernelError('WORKSPACE_INVALID', `${this.workspace.confirmationsFile}: 'confirmations' must be an array`);
    }
    this.items = new Map(file.confirmations.map((item) => [item.id, item]));
    await this.settleLeftovers();
  }

  /**
   * Confirmations are asked by a turn, which waits for the answer, and no turn outlives its kernel. At
   * load, one still pending (or approved and never used) was left by a kernel that was killed: nothing
   * will ever run it, so it is expired. Kept pending, the person could approve a call that no longer
   * exists, and "always" made a standing grant out of it.
   */
  private async settleLeftovers(): Promise<void> {
    const now = new Date().toISOString();
    const next = new Map(this.items);
    let changed = false;
    for (const [id, item] of next) {
      if (item.status === 'pending' || (item.status === 'approved' && item.kind === undefined)) {
        next.set(id, { ...item, status: 'expired', answeredAt: now });
        changed = true;
      }
    }
    if (changed) await this.persist(next);
  }

  get(id: string): Confirmation | undefined {
    return this.items.get(id);
  }

  list(filter: { status?: Confirmation['status']; sessionId?: string } = {}): Confirmation[] {
    return [...this.items.values()].filter((item) =>
      (filter.status === undefined || item.status === filter.status) && (filter.sessionId === undefined || item.sessionId === filter.sessionId));
  }

  create(input: NewConfirmation): Promise<Confirmation> {
    return this.queue.run(async () => {
      const id = input.id ?? newId();
      if (this.items.has(id)) throw new ConflictError('CONFLICT', `confirmation '${id}' already exists`);
      const confirmation: Confirmation = { ...input, id, createdAt: new Date().toISOString(), status: 'pending' };
      await this.persist(new Map(this.items).set(id, confirmation));
      return confirmation;
    });
  }

  /** Records the person's answer; a second answer, or one for other arguments, is refused. */
  answer(id: string, answer: ConfirmationAnswer): Promise<Confirmation> {
    return this.queue.run(async () => {
      const current = this.require(id);
      if (current.status !== 'pending') {
        throw new ConflictError('CONFIRMATION_ALREADY_ANSWERED', `confirmation '${id}' was already answered (${current.status})`, { details: { id, status: current.status } });
      }
      if (answer.always === true && current.kind !== undefined) {
        throw new KernelError('INVALID_INPUT', `confirmation '${id}' (${current.kind}) is answered each time, with no "always": ${current.kind === 'release' ? "a notebook's egress setting" : 'quire.json budgets'} is the standing answer`, { details: { id, field: 'always' } });
      }
      if (answer.argsHash !== current.argsHash) {
        throw new ConflictError('CONFIRMATION_ARGS_MISMATCH', `the answer is for other arguments than confirmation '${id}' asks about`, { details: { id, expected: current.argsHash } });
      }
      const answered: Confirmation = {
        ...current,
        status: answer.approved ? 'approved' : 'rejected',
        answeredAt: new Date().toISOString(),
        answeredBy: answer.answeredBy,
      };
      // The grant is written first: if that fails the confirmation stays pending and can be answered again.
      if (answer.approved && answer.always) answered.grantId = (await this.createGrant(current, answer)).id;
      await this.persist(new Map(this.items).set(id, answered));
      this.notify(answered);
      return answered;
    });
  }

  /**
   * Marks an approved confirmation as used. Refuses one that is not approved or already used, one for
   * another action or other arguments, and one asked in another session.
   */
  consume(id: string, call: { wireName: string; argsHash: string; sessionId: string | undefined }): Promise<Confirmation> {
    return this.queue.run(async () => {
      const current = this.require(id);
      if (current.status !== 'approved') {
        throw new ConflictError('CONFIRMATION_NOT_APPROVED', `confirmation '${id}' is ${current.status}, not approved`, { details: { id, status: current.status } });
      }
      if (current.wireName !== call.wireName || current.argsHash !== call.argsHash) {
        throw new ConflictError('CONFIRMATION_ARGS_MISMATCH', `confirmation '${id}' approved ${current.wireName} with other arguments`, { details: { id } });
      }
      if (current.sessionId !== undefined && current.sessionId !== call.sessionId) {
        throw new ConflictError('CONFIRMATION_SESSION_MISMATCH', `confirmation '${id}' belongs to another session`, { details: { id } });
      }
      const consumed: Confirmation = { ...current, status: 'consumed' };
      await this.persist(new Map(this.items).set(id, consumed));
      return consumed;
    });
  }

  /**
   * Closes a confirmation nobody will wait for any more (its turn timed out or was cancelled), so that a
   * late answer neither counts nor creates a grant. One answered meanwhile is returned as answered.
   */
  expire(id: string, options: { evenIfApproved?: boolean } = {}): Promise<Confirmation> {
    return this.queue.run(async () => {
      const current = this.require(id);
      // An approval nobody will use (its turn was cancelled) is closed too, so that it never lingers.
      if (current.status !== 'pending' && !(options.evenIfApproved && current.status === 'approved')) return current;
      const expired: Confirmation = { ...current, status: 'expired', answeredAt: new Date().toISOString() };
      await this.persist(new Map(this.items).set(id, expired));
      return expired;
    });
  }

  /** Resolves when the confirmation is answered (at once if it already is); rejects when the signal aborts. */
  waitForAnswer(id: string, signal?: AbortSignal): Promise<Confirmation> {
    const current = this.require(id);
    if (current.status !== 'pending') return Promise.resolve(current);
    return new Promise((resolve, reject) => {
      const listeners = this.waiters.get(id) ?? new Set();
      const onAnswer = (confirmation: Confirmation): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(confirmation);
      };
      const onAbort = (): void => {
        listeners.delete(onAnswer);
        if (listeners.size === 0 && this.waiters.get(id) === listeners) this.waiters.delete(id);
        reject(signal?.reason instanceof Error ? signal.reason : new KernelError('ACTION_CANCELLED', 'waiting for the confirmation was cancelled'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      listeners.add(onAnswer);
      this.waiters.set(id, listeners);
    });
  }

  private require(id: string): Confirmation {
    const current = this.items.get(id);
    if (!current) throw new NotFoundError('CONFIRMATION_NOT_FOUND', `no confirmation with id '${id}'`, { details: { id } });
    return current;
  }

  private createGrant(confirmation: Confirmation, answer: ConfirmationAnswer): ReturnType<GrantsStore['add']> {
    const notebook = answer.grantNotebook === null ? undefined : answer.grantNotebook ?? confirmation.notebook;
    return this.grants.add({
      plugin: confirmation.plugin,
      tool: confirmation.tool,
      action: confirmation.action,
      effects: confirmation.effects,
      ...(notebook !== undefined ? { notebook } : {}),
      ...(answer.grantExpiresAt !== undefined ? { expiresAt: answer.grantExpiresAt } : {}),
      createdBy: answer.answeredBy,
      fromConfirmation: confirmation.id,
    });
  }

  private notify(confirmation: Confirmation): void {
    const listeners = this.waiters.get(confirmation.id);
    this.waiters.delete(confirmation.id);
    for (const listener of listeners ?? []) listener(confirmation);
  }

  private async persist(next: Map<string, Confirmation>): Promise<void> {
    const kept = prune([...next.values()]);
    await writeJsonAtomic(this.workspace.confirmationsFile, { version: 1, confirmations: kept } satisfies ConfirmationsFile);
    this.items = new Map(kept.map((item) => [item.id, item]));
  }
}

/**
 * Answered ones beyond the last KEEP_ANSWERED go. A release or budget question is settled once answered
 * (approved, it is never consumed: it stayed for ever, each with up to 4,000 characters of a local-only
 * note, the file and every rewrite of it growing with each).
 */
function prune(items: Confirmation[]): Confirmation[] {
  const settled = items.filter((item) => item.status === 'consumed' || item.status === 'rejected' || item.status === 'expired' || (item.status === 'approved' && item.kind !== undefined));
  if (settled.length <= KEEP_ANSWERED) return items;
  const drop = new Set(settled.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).slice(0, settled.length - KEEP_ANSWERED));
  return items.filter((item) => !drop.has(item));
}
