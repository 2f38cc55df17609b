import { randomBytes } from 'node:crypto';
import { closeSync, fsync, openSync, writeSync } from 'node:fs';
import { open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../core/index.js';
import { fsyncPath } from './durable-sync.js';

/** Where a packed object's compressed bytes are. */
export interface PackedObject { pack: string; offset: number; length: number }

/** `packs/<name>.idx`: the objects of `packs/<name>.pack`, each `[hash, offset, length]`. */
interface PackIndex { objects: [string, number, number][] }

const HASH = /^[0-9a-f]{64}$/;
const PACK_NAME = /^pack-[0-9a-z-]+$/;

/** Packs smaller than this are merged once there are more than SMALL_PACKS_KEPT of them. */
const SMALL_PACK_BYTES = 1 << 20;
const SMALL_PACKS_KEPT = 16;

/** A pack is written in writes of about this size. */
const WRITE_CHUNK = 1 << 20;

/**
 * Many objects in one file: `packs/<name>.pack` holds their gzip members end to end, `<name>.idx`
 * says where each is. Creating a file costs 0.3–0.8 ms on a busy ext4 here (its journal), so the
 * 10,000 objects of a first snapshot go in one pack instead of 10,000 files. A pack's objects exist
 * once its index exists, and the index is written (atomically) only after the pack's content and name
 * are durable: a crash leaves a whole pack or a pack without an index, which nothing reads and purge
 * removes. Objects stay content-addressed: reading one checks its hash (ObjectStore.get).
 */
export class PackSet {
  private readonly objects = new Map<string, PackedObject>();
  /** Packs whose index was read, and the bytes each holds. */
  private readonly loaded = new Map<string, number>();

  constructor(readonly folder: string) {}

  locate(hash: string): PackedObject | undefined {
    return this.objects.get(hash);
  }

  /** Reads the indexes of packs not read yet (packs written since, by this process or another). */
  async refresh(): Promise<void> {
    const names = (await readdir(this.folder).catch(() => [] as string[]))
      .filter((name) => name.endsWith('.idx')).map((name) => name.slice(0, -4)).filter((name) => PACK_NAME.test(name));
    for (const name of names) {
      if (this.loaded.has(name)) continue;
      const index = await readIndex(join(this.folder, `${name}.idx`));
      // An index that does not parse was damaged after it was written: its objects read as missing (verify says so).
      if (!index) continue;
      let bytes = 0;
      for (const [hash, offset, length] of index.objects) {
        bytes += length;
        if (!this.objects.has(hash)) this.objects.set(hash, { pack: name, offset, length });
      }
      this.loaded.set(name, bytes);
    }
  }

  /** The compressed bytes of a packed object. */
  async read(at: PackedObject): Promise<Buffer> {
    const handle = await open(join(this.folder, `${at.pack}.pack`), 'r');
    try {
      const bytes = Buffer.alloc(at.length);
      const { bytesRead } = await handle.read(bytes, 0, at.length, at.offset);
      return bytes.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /** Every packed hash. */
  hashes(): string[] {
    return [...this.objects.keys()];
  }

  /** Pack names by the hashes they hold (for purge). */
  packs(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [hash, at] of this.objects) {
      const list = out.get(at.pack) ?? [];
      list.push(hash);
      out.set(at.pack, list);
    }
    return out;
  }

  /**
   * Merges the small packs into one when there are more than a few: a snapshot of a few changed files
   * writes a small pack, and without this their number (and the indexes a new process reads) would grow
   * with the history.
   */
  async compact(): Promise<void> {
    const small = [...this.loaded].filter(([, size]) => size < SMALL_PACK_BYTES).map(([pack]) => pack);
    if (small.length > SMALL_PACKS_KEPT) await this.rewrite(small, () => true);
  }

  /**
   * Writes the objects of `packs` that `keep` accepts into one new pack, then removes those packs: the
   * new pack is durable (index and all) before an old index goes, so every object is readable throughout
   * and a crash leaves at worst an object stored twice.
   */
  async rewrite(packs: string[], keep: (hash: string) => boolean): Promise<void> {
    const leaving = new Set(packs);
    const writer = new PackWriter(this.folder);
    try {
      // Each pack read whole once, not an open and a read per object.
      const wanted = new Map<string, [string, PackedObject][]>();
      for (const [hash, at] of this.objects) {
        if (!leaving.has(at.pack) || !keep(hash)) continue;
        const list = wanted.get(at.pack) ?? [];
        list.push([hash, at]);
        wanted.set(at.pack, list);
      }
      for (const [pack, objects] of wanted) {
        const bytes = await readFile(join(this.folder, `${pack}.pack`));
        for (const [hash, at] of objects) writer.add(hash, bytes.subarray(at.offset, at.offset + at.length));
      }
      await writer.commit();
    } finally {
      await writer.discard();
    }
    // Every kept object points at the new pack before an old pack's files go (in one turn of the event
    // loop): a read meanwhile (verify, a diff) finds it there, never a location whose file was removed.
    const moved = await readIndex(join(this.folder, `${writer.name}.idx`));
    for (const [hash, at] of this.objects) if (leaving.has(at.pack)) this.objects.delete(hash);
    if (moved) {
      let bytes = 0;
      for (const [hash, offset, length] of moved.objects) {
        bytes += length;
        this.objects.set(hash, { pack: writer.name, offset, length });
      }
      this.loaded.set(writer.name, bytes);
    }
    for (const pack of packs) await rm(join(this.folder, `${pack}.idx`), { force: true });
    await fsyncPath(this.folder);
    for (const pack of packs) await rm(join(this.folder, `${pack}.pack`), { force: true });
    for (const pack of packs) this.loaded.delete(pack);
    await this.refresh();
  }

  /** Packs without an index (a crash before their index was written): nothing refers to them. */
  async removeOrphans(): Promise<void> {
    const names = await readdir(this.folder).catch(() => [] as string[]);
    const indexed = new Set(names.filter((name) => name.endsWith('.idx')).map((name) => name.slice(0, -4)));
    for (const name of names) {
      const stray = (name.endsWith('.pack') && !indexed.has(name.slice(0, -5))) || name.endsWith('.tmp');
      if (stray) await rm(join(this.folder, name), { force: true });
    }
  }
}

async function readIndex(path: string): Promise<PackIndex | undefined> {
  try {
    const index = JSON.parse(await readFile(path, 'utf8')) as PackIndex;
    if (!Array.isArray(index.objects)) return undefined;
    return { objects: index.objects.filter((entry) => Array.isArray(entry) && HASH.test(String(entry[0])) && Number.isSafeInteger(entry[1]) && Number.isSafeInteger(entry[2])) };
  } catch {
    return undefined;
  }
}

/**
 * A pack being written. `add` appends synchronously (a write of a few kilobytes to the page cache);
 * `commit` syncs the pack, makes its name durable, then writes its index atomically.
 */
export class PackWriter {
  readonly name = `pack-${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`;
  private fd: number | undefined;
  /** Bytes in the file so far, and bytes gathered for it. */
  private size = 0;
  private buffered = 0;
  private chunks: Uint8Array[] = [];
  private readonly entries: [string, number, number][] = [];

  constructor(private readonly folder: string) {}

  get count(): number {
    return this.entries.length;
  }

  /** The pack's folder must exist. Objects are gathered and written a mebibyte at a time. */
  add(hash: string, compressed: Uint8Array): void {
    this.entries.push([hash, this.size + this.buffered, compressed.length]);
    this.chunks.push(compressed);
    this.buffered += compressed.length;
    if (this.buffered >= WRITE_CHUNK) this.flush();
  }

  private flush(): void {
    if (this.buffered === 0) return;
    this.fd ??= openSync(this.packPath(), 'wx');
    const bytes = Buffer.concat(this.chunks, this.buffered);
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written, bytes.length - written, this.size + written);
    this.size += bytes.length;
    this.chunks = [];
    this.buffered = 0;
  }

  async commit(): Promise<void> {
    this.flush();
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      // On the thread pool: a first snapshot's pack can be hundreds of MiB, whose fsync held the event loop.
      await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
    } finally {
      closeSync(fd);
    }
    // The pack's name durable before the index that makes its objects exist.
    await fsyncPath(this.folder);
    await writeFileAtomic(join(this.folder, `${this.name}.idx`), JSON.stringify({ objects: this.entries } satisfies PackIndex));
    this.committed = true;
  }

  /** Whether commit() finished: its index makes the pack's objects exist. */
  private committed = false;

  /** Removes a pack not committed, also one whose commit failed part way (its fsync, its index). */
  async discard(): Promise<void> {
    this.chunks = [];
    this.buffered = 0;
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
    if (this.committed) return;
    await rm(this.packPath(), { force: true });
    await rm(join(this.folder, `${this.name}.idx`), { force: true });
  }

  private packPath(): string {
    return join(this.folder, `${this.name}.pack`);
  }
}
