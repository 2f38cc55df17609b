import { existsSync } from 'node:fs';
import { mkdir, open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from '../di.js';
import { LOGGER, WORKSPACE } from '../core-tokens.js';
import { KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import type { Logger } from '../log.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import { GENESIS_HASH, sealRecord, type AuditEntry, type AuditRecord } from './audit-record.js';
import { readLastLine } from './read-last-line.js';
import { verifyAuditLog, type AuditHead, type AuditVerification } from './verify-audit.js';

/**
 * `<workspace>/audit/audit.jsonl`: append-only, each line hash-chained to the one before. `audit.head.json`
 * holds the last seq and hash, so that lines cut from the end are detected too. The log is the truth
 * for where the chain continues; the head only ever lags it (a crash between the two writes) and is
 * caught up on open.
 */
@injectable()
export class AuditLog {
  private head: AuditHead = { seq: 0, hash: GENESIS_HASH };
  private file: FileHandle | undefined;
  private readonly queue = new SerialQueue();

  constructor(
    @inject(WORKSPACE) private readonly workspace: Workspace,
    @inject(LOGGER) private readonly log: Logger,
  ) {}

  get logFile(): string { return join(this.workspace.auditDir, 'audit.jsonl'); }
  get headFile(): string { return join(this.workspace.auditDir, 'audit.head.json'); }

  /** Opens the log for appending; refuses a log that lost lines at its end, so appends cannot hide it. */
  async open(): Promise<void> {
    await mkdir(this.workspace.auditDir, { recursive: true });
    const head = await readJsonFile<AuditHead | undefined>(this.headFile, undefined);
    const last = await this.lastRecord();
    const position: AuditHead = last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: GENESIS_HASH };
    if (head && (head.seq > position.seq || (head.seq === position.seq && head.hash !== position.hash))) {
      throw new KernelError('AUDIT_CHAIN_BROKEN', `${this.logFile} ends at seq ${position.seq} but ${this.headFile} records seq ${head.seq}: lines were removed or changed. Run 'quire audit verify'; to start a new log, move the audit folder aside.`, {
        details: { file: this.logFile, logSeq: position.seq, headSeq: head.seq },
      });
    }
    this.head = position;
    if (!head || head.seq !== position.seq) await writeJsonAtomic(this.headFile, position);
    this.file = await open(this.logFile, 'a', 0o600);
  }

  /**
   * Appends one line; resolves once it is durable. Entries that arrive while a write is under way are
   * written together at the next one (group commit): one append, one datasync and one head update for
   * all of them, each line still chained to the one before.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    return new Promise<AuditRecord>((resolve, reject) => {
      this.waiting.push({ entry, resolve, reject });
      if (this.waiting.length === 1) void this.queue.run(() => this.writeWaiting());
    });
  }

  private readonly waiting: { entry: AuditEntry; resolve(record: AuditRecord): void; reject(error: unknown): void }[] = [];

  private async writeWaiting(): Promise<void> {
    const batch = this.waiting.splice(0);
    if (batch.length === 0) return;
    try {
      if (!this.file) throw new KernelError('INTERNAL', 'the audit log is not open');
      const now = new Date();
      const records: AuditRecord[] = [];
      let { seq, hash } = this.head;
      for (const { entry } of batch) {
        const record = sealRecord(entry, seq + 1, hash, now);
        records.push(record);
        ({ seq, hash } = record);
      }
      await this.write(records.map((record) => `${JSON.stringify(record)}\n`).join(''));
      // The lines are durable: the chain continues from them even if the head file cannot be written now.
      this.head = { seq, hash };
      await writeJsonAtomic(this.headFile, this.head).catch((error: Error) => {
        this.log.error('audit head not written; it is caught up on the next open', { error: error.message });
      });
      batch.forEach((item, i) => item.resolve(records[i]!));
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  /** Appends and syncs; a write that fails is cut back off, so the log is as it was, never half a line longer. */
  private async write(text: string): Promise<void> {
    const file = this.file!;
    const before = (await file.stat()).size;
    try {
      await file.appendFile(text);
      await file.datasync();
    } catch (error) {
      await file.truncate(before).then(() => file.datasync()).catch((cut: Error) => {
        this.log.error('a failed audit append could not be cut back; the next open sets the torn end aside', { error: cut.message });
      });
      throw error;
    }
  }

  verify(): Promise<AuditVerification> {
    return this.queue.run(async () => verifyAuditLog(this.logFile, await readJsonFile<AuditHead | undefined>(this.headFile, undefined)));
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
      await this.file?.close();
      this.file = undefined;
    });
  }

  /** The last complete line. A torn final line (a crash in the middle of an append) was never acknowledged and is dropped. */
  private async lastRecord(): Promise<AuditRecord | undefined> {
    if (!existsSync(this.logFile)) return undefined;
    const last = await readLastLine(this.logFile);
    if (last.tornFrom !== undefined) {
      this.log.warn('dropping a torn final line of the audit log', { file: this.logFile, bytes: (await stat(this.logFile)).size - last.tornFrom });
      await truncate(this.logFile, last.tornFrom);
    }
    if (last.line === undefined) return undefined;
    try {
      return JSON.parse(last.line) as AuditRecord;
    } catch {
      throw new KernelError('AUDIT_CHAIN_BROKEN', `the last line of ${this.logFile} is not valid JSON; run 'quire audit verify'`);
    }
  }
}

/** Verifies a workspace's audit log without opening a kernel (for `quire audit verify`). */
export async function verifyWorkspaceAudit(workspace: Workspace): Promise<AuditVerification> {
  const logFile = join(workspace.auditDir, 'audit.jsonl');
  return verifyAuditLog(logFile, await readJsonFile<AuditHead | undefined>(join(workspace.auditDir, 'audit.head.json'), undefined));
}
