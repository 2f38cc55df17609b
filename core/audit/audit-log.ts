import { existsSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from '../di.js';
import { WORKSPACE } from '../core-tokens.js';
import { KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import { GENESIS_HASH, sealRecord, type AuditEntry, type AuditRecord } from './audit-record.js';
import { verifyAuditLog, type AuditHead, type AuditVerification } from './verify-audit.js';

/**
 * `<workspace>/audit/audit.jsonl`: append-only, each line hash-chained to the one before. `audit.head.json`
 * holds the last seq and hash, so that lines cut from the end are detected too.
 */
@injectable()
export class AuditLog {
  private head: AuditHead = { seq: 0, hash: GENESIS_HASH };
  private file: FileHandle | undefined;
  private readonly queue = new SerialQueue();

  constructor(@inject(WORKSPACE) private readonly workspace: Workspace) {}

  get logFile(): string { return join(this.workspace.auditDir, 'audit.jsonl'); }
  get headFile(): string { return join(this.workspace.auditDir, 'audit.head.json'); }

  /** Opens the log for appending, continuing the chain recorded in the head file. */
  async open(): Promise<void> {
    await mkdir(this.workspace.auditDir, { recursive: true });
    this.head = await readJsonFile<AuditHead>(this.headFile, { seq: 0, hash: GENESIS_HASH });
    if (!existsSync(this.logFile) && this.head.seq > 0) {
      throw new KernelError('AUDIT_CHAIN_BROKEN', `${this.logFile} is missing but ${this.headFile} records ${this.head.seq} lines`);
    }
    this.file = await open(this.logFile, 'a', 0o600);
  }

  append(entry: AuditEntry): Promise<AuditRecord> {
    return this.queue.run(async () => {
      if (!this.file) throw new KernelError('INTERNAL', 'the audit log is not open');
      const record = sealRecord(entry, this.head.seq + 1, this.head.hash, new Date());
      await this.file.appendFile(`${JSON.stringify(record)}\n`);
      await this.file.datasync();
      this.head = { seq: record.seq, hash: record.hash };
      await writeJsonAtomic(this.headFile, this.head);
      return record;
    });
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
}

/** Verifies a workspace's audit log without opening a kernel (for `quire audit verify`). */
export async function verifyWorkspaceAudit(workspace: Workspace): Promise<AuditVerification> {
  const log = new AuditLog(workspace);
  return verifyAuditLog(log.logFile, await readJsonFile<AuditHead | undefined>(log.headFile, undefined));
}
