import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { KernelError, writeFileAtomic } from '../../core/index.js';

const HASH = /^[0-9a-f]{64}$/;

export function sha256(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * File contents stored once each, by the SHA-256 of the content, gzip-compressed:
 * `objects/<first two hex>/<hash>`. Reading an object checks its hash, so a damaged or altered object
 * is never handed out as if it were intact.
 */
export class ObjectStore {
  constructor(readonly folder: string) {}

  private path(hash: string): string {
    if (!HASH.test(hash)) throw new KernelError('INVALID_INPUT', `'${hash.slice(0, 80)}' is not an object hash`);
    return join(this.folder, hash.slice(0, 2), hash);
  }

  has(hash: string): boolean {
    return existsSync(this.path(hash));
  }

  /** Stores content (if not stored yet) and returns its hash. */
  async put(content: Uint8Array): Promise<string> {
    const hash = sha256(content);
    // Level 3: most of the size saving of the default level at a fraction of its time.
    if (!this.has(hash)) await writeFileAtomic(this.path(hash), gzipSync(content, { level: 3 }));
    return hash;
  }

  /** The content of an object, checked against its hash. */
  async get(hash: string): Promise<Buffer> {
    let content: Buffer;
    try {
      content = gunzipSync(await readFile(this.path(hash)));
    } catch (error) {
      throw new KernelError('WORKSPACE_INVALID', `snapshot object ${hash} is missing or unreadable`, { details: { object: hash, reason: (error as Error).message } });
    }
    if (sha256(content) !== hash) throw new KernelError('WORKSPACE_INVALID', `snapshot object ${hash} is damaged: its content does not match its hash`, { details: { object: hash } });
    return content;
  }

  /** Every stored hash. */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const prefix of await readdir(this.folder).catch(() => [] as string[])) {
      for (const name of await readdir(join(this.folder, prefix)).catch(() => [] as string[])) if (HASH.test(name)) out.push(name);
    }
    return out;
  }

  async remove(hash: string): Promise<void> {
    await rm(this.path(hash), { force: true });
  }
}
