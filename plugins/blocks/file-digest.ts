import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

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
