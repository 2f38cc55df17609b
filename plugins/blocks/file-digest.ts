import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFileAtomic } from '../../core/index.js';

/** A file's SHA-256, read as a stream (attachments may be larger than a buffer can hold); undefined when it cannot be read. */
export async function fileDigest(path: string): Promise<string | undefined> {
  try {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } catch {
    return undefined;
  }
}

/** What copyUnlessSame did: copied; the same bytes there already; other bytes there (kept unless replacing); no source. */
export type CopyOutcome = 'copied' | 'same' | 'different' | 'missing';

/**
 * Copies `source` to `target` unless the target holds the same bytes; a target with other bytes is
 * replaced only with `replace`. Compared by streamed hashes: attachments may be large.
 */
export async function copyUnlessSame(source: string, target: string, replace = false): Promise<CopyOutcome> {
  const wanted = await fileDigest(source);
  if (wanted === undefined) return 'missing';
  const present = await fileDigest(target);
  if (present === wanted) return 'same';
  if (present !== undefined && !replace) return 'different';
  if (replace) {
    await copyFileAtomic(source, target);
    return 'copied';
  }
  // Not replacing: put in place only if still absent (two imports at once both found it missing, and the
  // second's rename replaced the first's attachment under the first's notes).
  try {
    await copyFileAtomic(source, target, { exclusive: true });
    return 'copied';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await fileDigest(target)) === wanted ? 'same' : 'different';
  }
}
