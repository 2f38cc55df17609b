import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync, type ZlibOptions } from 'node:zlib';
import { KernelError, diskFull } from '../../core/index.js';
import { syncPaths } from './durable-sync.js';
import { PackSet, PackWriter } from './object-pack.js';

const HASH = /^[0-9a-f]{64}$/;

/**
 * Level 3: most of the size saving of the default level at a fraction of its time. A 16 KB window and
 * the default memory: setting up a compressor with the default 32 KB window costs more than
 * compressing a document of a few kilobytes, and notes files rarely repeat themselves from further back.
 */
const GZIP: ZlibOptions = { level: 3, windowBits: 14, memLevel: 8 };

/**
 * From this many new objects on, a batch writes one pack instead of a file each (see PackSet): a pack
 * costs four fsyncs one after the other whatever it holds, separate files two each (their content, then
 * their folder), four at a time on Node's thread pool.
 */
const PACK_FROM = 4;

/** Renames in flight at once when a batch of separate files is committed. */
const RENAME_PARALLEL = 16;

export function sha256(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * File contents stored once each, by the SHA-256 of the content, gzip-compressed: one file each
 * (`objects/<first two hex>/<hash>`) or many in a pack (`objects/pack/`, for large batches). Reading
 * an object checks its hash, so a damaged or altered object is never handed out as if it were intact.
 * An object only ever becomes visible once its content is on disk (see ObjectBatch), so an object that
 * exists is whole unless something outside damaged it.
 */
export class ObjectStore {
  readonly packs: PackSet;

  constructor(readonly folder: string) {
    this.packs = new PackSet(join(folder, 'pack'));
  }

  pathOf(hash: string): string {
    if (!HASH.test(hash)) throw new KernelError('INVALID_INPUT', `'${hash.slice(0, 80)}' is not an object hash`);
    return join(this.folder, hash.slice(0, 2), hash);
  }

  /** Whether an object is stored, as of the last `packs.refresh()` for packed ones. */
  has(hash: string): boolean {
    return this.packs.locate(hash) !== undefined || existsSync(this.pathOf(hash));
  }

  /** Objects written together and made durable together; `expected` (how many may be new) picks files or a pack. */
  async batch(expected = 0): Promise<ObjectBatch> {
    await this.packs.refresh();
    return new ObjectBatch(this, expected >= PACK_FROM);
  }

  /** Stores content (if not stored yet), durably, and returns its hash. */
  async put(content: Uint8Array): Promise<string> {
    const batch = await this.batch(1);
    try {
      const hash = await batch.add(content);
      await batch.commit();
      return hash;
    } finally {
      await batch.discard();
    }
  }

  /** The content of an object, checked against its hash. */
  async get(hash: string): Promise<Buffer> {
    let content: Buffer;
    try {
      content = gunzipSync(await this.compressed(hash));
    } catch (error) {
      throw new KernelError('WORKSPACE_INVALID', `snapshot object ${hash} is missing or unreadable`, { details: { object: hash, reason: (error as Error).message } });
    }
    if (sha256(content) !== hash) throw new KernelError('WORKSPACE_INVALID', `snapshot object ${hash} is damaged: its content does not match its hash`, { details: { object: hash } });
    return content;
  }

  private async compressed(hash: string): Promise<Buffer> {
    const path = this.pathOf(hash);
    let packed = this.packs.locate(hash);
    if (!packed && !existsSync(path)) {
      await this.packs.refresh();
      packed = this.packs.locate(hash);
    }
    if (!packed) return readFile(path);
    try {
      return await this.packs.read(packed);
    } catch (error) {
      // Its pack merged into another meanwhile (compaction, purge): read it where it is now.
      const now = this.packs.locate(hash);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !now || now === packed) throw error;
      return this.packs.read(now);
    }
  }

  /** Every stored hash. */
  async list(): Promise<string[]> {
    await this.packs.refresh();
    const out = new Set(this.packs.hashes());
    for (const prefix of await readdir(this.folder).catch(() => [] as string[])) {
      if (prefix.length !== 2) continue;
      for (const name of await readdir(join(this.folder, prefix)).catch(() => [] as string[])) if (HASH.test(name)) out.add(name);
    }
    return [...out];
  }

  /** Drops every object not in `keep`; returns how many distinct objects went. */
  async keepOnly(keep: ReadonlySet<string>): Promise<number> {
    const gone = new Set<string>();
    await this.packs.refresh();
    const partly: string[] = [];
    for (const [pack, hashes] of this.packs.packs()) {
      const dropped = hashes.filter((hash) => !keep.has(hash));
      if (dropped.length === 0) continue;
      for (const hash of dropped) gone.add(hash);
      partly.push(pack);
    }
    if (partly.length > 0) await this.packs.rewrite(partly, (hash) => keep.has(hash));
    await this.packs.removeOrphans();
    for (const hash of await this.list()) {
      if (keep.has(hash)) continue;
      await rm(this.pathOf(hash), { force: true });
      gone.add(hash);
    }
    return gone.size;
  }
}

/**
 * New objects of one snapshot, made durable together before the caller writes the record that refers
 * to them. Few objects: each is written to a temporary file without an fsync, and `commit` syncs their
 * contents (an fsync each, or one syncfs for many), renames them, then syncs the folders touched.
 * Many objects: they are appended to one pack (see PackSet). Either way contents are on disk before an
 * object becomes visible, so a crash leaves whole objects and stray temporary files, never an object
 * that is named but empty, and no record refers to an object a crash can take back.
 */
export class ObjectBatch {
  /** hash → temporary file holding its compressed content (separate files). */
  private readonly staged = new Map<string, string>();
  /** Hashes appended to the pack. */
  private readonly packed = new Set<string>();
  /** Folders whose entries change: where objects go, and the parents of folders created. */
  private readonly touched = new Set<string>();
  private readonly ready = new Set<string>();
  private readonly pack: PackWriter | undefined;

  constructor(private readonly store: ObjectStore, packed: boolean) {
    this.pack = packed ? new PackWriter(store.packs.folder) : undefined;
  }

  /** Stores content unless it is stored (or in this batch) already; returns its hash. */
  async add(content: Uint8Array): Promise<string> {
    const hash = sha256(content);
    if (this.staged.has(hash) || this.packed.has(hash) || this.store.has(hash)) return hash;
    if (this.pack) return this.addToPack(hash, content);
    const target = this.store.pathOf(hash);
    const folder = dirname(target);
    const temp = join(folder, `.${hash}.${randomBytes(6).toString('hex')}.tmp`);
    // Claimed before the first await, so the same content added twice at once is written once.
    this.staged.set(hash, temp);
    try {
      if (!this.ready.has(folder)) await this.makeFolder(folder);
      await writeFile(temp, gzipSync(content, GZIP), { flag: 'wx' });
    } catch (error) {
      this.staged.delete(hash);
      await rm(temp, { force: true });
      throw diskFull(error, { what: 'snapshot object', file: target });
    }
    return hash;
  }

  private async addToPack(hash: string, content: Uint8Array): Promise<string> {
    const folder = this.store.packs.folder;
    this.packed.add(hash);
    try {
      if (!this.ready.has(folder)) await this.makeFolder(folder);
      this.pack!.add(hash, gzipSync(content, GZIP));
    } catch (error) {
      this.packed.delete(hash);
      throw diskFull(error, { what: 'snapshot object', file: folder });
    }
    return hash;
  }

  private async makeFolder(folder: string): Promise<void> {
    const made = await mkdir(folder, { recursive: true });
    if (made !== undefined) {
      // Every folder created, and the one it was created in, has a new entry to make durable.
      for (let at = folder; at !== made && at !== dirname(at); at = dirname(at)) this.touched.add(dirname(at));
      this.touched.add(dirname(made));
    }
    this.touched.add(folder);
    this.ready.add(folder);
  }

  /** Contents durable, then names, then the names durable. Every object added is stored when it returns. */
  async commit(): Promise<void> {
    try {
      if (this.pack) await this.pack.commit();
      const staged = [...this.staged];
      if (staged.length > 0) {
        await syncPaths(staged.map(([, temp]) => temp), this.store.folder);
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < staged.length) {
            const [hash, temp] = staged[next++]!;
            await rename(temp, this.store.pathOf(hash));
            this.staged.delete(hash);
          }
        };
        await Promise.all(Array.from({ length: Math.min(RENAME_PARALLEL, staged.length) }, worker));
      }
      if (staged.length > 0 || this.packed.size > 0) await syncPaths([...this.touched], this.store.folder);
    } catch (error) {
      throw diskFull(error, { what: 'snapshot object', file: this.store.folder });
    }
    this.touched.clear();
    if (this.pack && this.packed.size > 0) {
      await this.store.packs.refresh();
      await this.store.packs.compact();
    }
  }

  /** Removes what was written and not committed (a stopped or failed snapshot). */
  async discard(): Promise<void> {
    const temps = [...this.staged.values()];
    this.staged.clear();
    await Promise.all(temps.map((temp) => rm(temp, { force: true })));
    await this.pack?.discard();
  }
}
