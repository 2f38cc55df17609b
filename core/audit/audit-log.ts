import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { inject, injectable } from '../di.js';
import { LOGGER, WORKSPACE } from '../core-tokens.js';
import { KernelError } from '../errors.js';
import { syncFolder, writeJsonAtomic } from '../fs/atomic-write.js';
import { diskFull } from '../fs/disk-full.js';
import type { Logger } from '../log.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import { GENESIS_HASH, sealRecord, type AuditEntry, type AuditRecord } from './audit-record.js';
import { findLogEnd, recoveryEntry, setTornTailAside, type KeptTail } from './recover-tail.js';
import type { AuditAnchor } from './anchors.js';
import { verifyAuditLog, type AuditHead, type AuditVerification } from './verify-audit.js';

/**
 * `<workspace>/audit/audit.jsonl`: append-only, each line hash-chained to the one before. `audit.head.json`
 * holds the last seq and hash, so that lines cut from the end are detected too. The log is the truth
 * for where the chain continues; the head only ever lags it (a crash between the two writes) and is
 * caught up on open.
 */
/** How long the head file may lag the log's last durable line (a crash then only makes open() catch it up). */
const HEAD_DELAY_MS = 100;

@injectable()
export class AuditLog {
  private head: AuditHead = { seq: 0, hash: GENESIS_HASH };
  private file: FileHandle | undefined;
  /** Bytes of whole lines: where the log ends when it is as it should be. */
  private size = 0;
  /** A failed append could not be cut back: the next write cuts it back first, never writes after it. */
  private torn = false;
  private readonly queue = new SerialQueue();

  constructor(
    @inject(WORKSPACE) private readonly workspace: Workspace,
    @inject(LOGGER) private readonly log: Logger,
  ) {}

  get logFile(): string { return join(this.workspace.auditDir, 'audit.jsonl'); }
  get headFile(): string { return join(this.workspace.auditDir, 'audit.head.json'); }

  /**
   * Opens the log for appending. A torn end (an append cut short by a crash or a full disk, never
   * acknowledged) is set aside and the log says so in its next line; a log that lost acknowledged lines
   * at its end is refused, so appends cannot hide it.
   */
  async open(): Promise<void> {
    await mkdir(this.workspace.auditDir, { recursive: true });
    const head = await readJsonFile<AuditHead | undefined>(this.headFile, undefined);
    const end = await findLogEnd(this.logFile);
    const position: AuditHead = end.last ? { seq: end.last.seq, hash: end.last.hash } : { seq: 0, hash: GENESIS_HASH };
    if (head && (head.seq > position.seq || (head.seq === position.seq && head.hash !== position.hash))) {
      throw new KernelError('AUDIT_CHAIN_BROKEN', `${this.logFile} ends at seq ${position.seq} but ${this.headFile} records seq ${head.seq}: lines were removed or changed. Run 'quire audit verify'; to start a new log, move the audit folder aside.`, {
        details: { file: this.logFile, logSeq: position.seq, headSeq: head.seq },
      });
    }
    const kept = end.tornFrom === undefined ? undefined : await this.mapFull(() => setTornTailAside(this.logFile, end.tornFrom!, end.size));
    this.head = position;
    // The head only ever lags the log; one that cannot be caught up now (a full disk) is caught up later.
    if (!head || head.seq !== position.seq) {
      await writeJsonAtomic(this.headFile, position).catch((error: Error) => this.log.error('audit head not caught up; it is at the next append or start', { error: error.message }));
    }
    const created = !existsSync(this.logFile);
    this.file = await open(this.logFile, 'a', 0o600);
    // A new log's name is made durable before its first line is acknowledged (fdatasync syncs the file, not
    // the folder that names it): a power cut could otherwise take the log and its synced lines together.
    if (created) await syncFolder(dirname(this.logFile));
    this.size = (await this.file.stat()).size;
    if (kept) await this.recordRecovery(kept, position.seq);
  }

  /** Said once: in the kernel's log, and as a line of the chain (which verify reports as a recovered end). */
  private async recordRecovery(kept: KeptTail, afterSeq: number): Promise<void> {
    this.log.warn('the audit log ended with a torn append (a crash or a full disk); its bytes were set aside and the log goes on from its last whole line', {
      file: this.logFile, bytes: kept.bytes, keptIn: kept.keptIn, afterSeq,
    });
    await this.append(recoveryEntry(kept, afterSeq));
  }

  /** The last durable line: what a snapshot or an anchor records of the log. */
  currentHead(): AuditHead {
    return { ...this.head };
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

  /** The head write under way or due, and whether the head moved on since the last one started. */
  private headWriting: Promise<void> | undefined;
  private headTimer: NodeJS.Timeout | undefined;
  private headMoved = false;

  /**
   * Writes the head after the lines' answers, off their latency path (an atomic write, two fsyncs), at
   * most every HEAD_DELAY_MS: the head only ever lags the log, which open() catches up, so a crash
   * before it is written loses nothing, and appends in a row share one head write instead of one each.
   * verify() and close() write it first.
   */
  private writeHeadSoon(): void {
    this.headMoved = true;
    if (this.headWriting || this.headTimer) return;
    this.headTimer = setTimeout(() => void this.writeHeadNow(), HEAD_DELAY_MS);
    this.headTimer.unref();
  }

  /** Writes the head now if it moved on, and resolves once it is written (or its write failed). */
  private writeHeadNow(): Promise<void> {
    clearTimeout(this.headTimer);
    this.headTimer = undefined;
    if (this.headWriting || !this.headMoved) return this.headWriting ?? Promise.resolve();
    this.headWriting = (async () => {
      // The loop awaits at least once (headMoved is true), so this runs after the assignment below.
      while (this.headMoved) {
        this.headMoved = false;
        await writeJsonAtomic(this.headFile, this.head).catch((error: Error) => {
          this.log.error('audit head not written; it is caught up on the next append or open', { error: error.message });
        });
      }
      this.headWriting = undefined;
    })();
    return this.headWriting;
  }

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
      await this.write(records.map((record) => `${JSON.stringify(record)}\n`).join(''), batch.map(({ entry }) => entry));
      // The lines are durable: the chain continues from them even if the head file cannot be written now.
      this.head = { seq, hash };
      batch.forEach((item, i) => item.resolve(records[i]!));
      this.writeHeadSoon();
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  /**
   * Appends and syncs; a write that fails is cut back off, so the log is as it was, never half a line
   * longer. If even the cut fails, nothing is written until a later write has made it.
   */
  private async write(text: string, entries: readonly AuditEntry[]): Promise<void> {
    const file = this.file!;
    try {
      if (this.torn) await this.cutBack(file);
      await file.appendFile(text);
      await file.datasync();
      this.size += Buffer.byteLength(text);
    } catch (error) {
      this.torn = true;
      await this.cutBack(file).catch((cut: Error) => {
        this.log.error('a failed audit append could not be cut back yet; the next append (or the next open) does it', { error: cut.message });
      });
      throw this.fullError(error, entries);
    }
  }

  private async cutBack(file: FileHandle): Promise<void> {
    await file.truncate(this.size);
    await file.datasync();
    this.torn = false;
  }

  private fullError(error: unknown, entries: readonly AuditEntry[]): unknown {
    const actions = entries.map((entry) => `${entry.plugin}/${entry.tool}/${entry.action}`);
    return diskFull(error, {
      what: 'audit log', file: this.relativeLogFile,
      note: `${entries.length} line(s) not written, for ${actions.slice(0, 3).join(', ')}${actions.length > 3 ? '…' : ''}; the log is as it was`,
      details: { actions: actions.slice(0, 20), outcomes: entries.slice(0, 20).map((entry) => entry.outcome) },
    });
  }

  private get relativeLogFile(): string {
    return relative(this.workspace.root, this.logFile).split(sep).join('/');
  }

  private async mapFull<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw diskFull(error, { what: 'audit log', file: this.relativeLogFile, note: 'its torn end could not be set aside; the log was not changed' });
    }
  }

  /**
   * The head and the log's length are taken between appends; the walk up to that length runs outside
   * the append queue (it held every audited action for the whole walk).
   */
  async verify(anchors: readonly AuditAnchor[] = []): Promise<AuditVerification> {
    const { head, size } = await this.queue.run(async () => {
      await this.writeHeadNow();
      return { head: await readJsonFile<AuditHead | undefined>(this.headFile, undefined), size: (await stat(this.logFile).catch(() => undefined))?.size ?? 0 };
    });
    return verifyAuditLog(this.logFile, head, anchors, size);
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
      await this.writeHeadNow();
      await this.file?.close();
      this.file = undefined;
    });
  }
}
