import { crc32, inflateRawSync } from 'node:zlib';
import { RATIO_FLOOR_BYTES, skillError } from './skill-limits.js';
import { checkRelativePath } from './skill-paths.js';
import type { PackageFile, PackageLimits } from './skill-package.js';

interface CentralEntry {
  path: string;
  method: number;
  compressedSize: number;
  size: number;
  crc: number;
  localOffset: number;
  mode: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const corrupt = (why: string) => skillError('ARCHIVE_CORRUPT', `the zip archive is damaged: ${why}`);

/**
 * A zip archive read from its central directory, every entry checked (path, type, declared size,
 * compression ratio, encryption) before a byte is inflated; then inflated with the declared size as a
 * hard ceiling and its CRC checked. Nothing is written here: the caller gets the files in memory.
 */
export function readZip(archive: Buffer, limits: PackageLimits): PackageFile[] {
  const entries = centralDirectory(archive);
  if (entries.length > limits.maxFiles) throw skillError('TOO_MANY_FILES', `the archive holds ${entries.length} entries, more than the ${limits.maxFiles} allowed`, { limit: limits.maxFiles });
  const files: { entry: CentralEntry; path: string }[] = [];
  let total = 0;
  for (const entry of entries) {
    const isFolder = entry.path.endsWith('/');
    const path = checkRelativePath(isFolder ? entry.path.slice(0, -1) : entry.path, 'the archive entry');
    const type = entry.mode & 0o170000;
    if (type === 0o120000) throw skillError('LINK', `the archive entry '${path}' is a symbolic link; links are never installed`, { path });
    if (isFolder || type === 0o040000) continue;
    if (type !== 0 && type !== 0o100000) throw skillError('NOT_A_FILE', `the archive entry '${path}' is not a regular file`, { path });
    if (entry.size > RATIO_FLOOR_BYTES / 16 && entry.size / Math.max(1, entry.compressedSize) > limits.maxRatio) {
      throw skillError('ARCHIVE_RATIO', `the archive entry '${path}' expands ${Math.round(entry.size / Math.max(1, entry.compressedSize))} times (${entry.compressedSize} → ${entry.size} bytes), more than the ${limits.maxRatio} allowed: refused as a likely zip bomb`, { path });
    }
    total += entry.size;
    files.push({ entry, path });
  }
  if (total > RATIO_FLOOR_BYTES && total / archive.length > limits.maxRatio) {
    throw skillError('ARCHIVE_RATIO', `the archive expands ${Math.round(total / archive.length)} times (${archive.length} → ${total} bytes), more than the ${limits.maxRatio} allowed: refused as a likely zip bomb`);
  }
  if (total > limits.maxBytes) throw skillError('ARCHIVE_TOO_LARGE', `the archive's files add up to ${total} bytes, more than the ${limits.maxBytes} allowed`, { bytes: total, limit: limits.maxBytes });
  return files.map(({ entry, path }) => ({ path, data: inflate(archive, entry, path), mode: entry.mode & 0o777 }));
}

function centralDirectory(archive: Buffer): CentralEntry[] {
  const end = findEnd(archive);
  const count = archive.readUInt16LE(end + 10);
  const size = archive.readUInt32LE(end + 12);
  let offset = archive.readUInt32LE(end + 16);
  if (count === 0xffff || offset === 0xffffffff || size === 0xffffffff) throw skillError('ARCHIVE_UNSUPPORTED', 'the archive is a ZIP64 archive, which is not read here (a skill is never that large)');
  if (offset + size > end) throw corrupt('its central directory lies outside the file');
  const entries: CentralEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (offset + 46 > end || archive.readUInt32LE(offset) !== CENTRAL) throw corrupt(`entry ${index + 1} of its directory is not where it should be`);
    const madeBy = archive.readUInt16LE(offset + 4);
    const flags = archive.readUInt16LE(offset + 8);
    const method = archive.readUInt16LE(offset + 10);
    const crc = archive.readUInt32LE(offset + 16);
    const compressedSize = archive.readUInt32LE(offset + 20);
    const uncompressed = archive.readUInt32LE(offset + 24);
    const nameLength = archive.readUInt16LE(offset + 28);
    const extraLength = archive.readUInt16LE(offset + 30);
    const commentLength = archive.readUInt16LE(offset + 32);
    const external = archive.readUInt32LE(offset + 38);
    const localOffset = archive.readUInt32LE(offset + 42);
    const path = archive.subarray(offset + 46, offset + 46 + nameLength).toString(flags & 0x800 ? 'utf8' : 'latin1');
    if (flags & 0x1) throw skillError('ARCHIVE_ENCRYPTED', `the archive entry '${path.slice(0, 200)}' is encrypted`, { path: path.slice(0, 200) });
    if (method !== 0 && method !== 8) throw skillError('ARCHIVE_UNSUPPORTED', `the archive entry '${path.slice(0, 200)}' uses compression method ${method}; only stored and deflated entries are read`, { path: path.slice(0, 200) });
    // Unix permissions and type sit in the high half of the external attributes when the archive was made on Unix.
    const mode = madeBy >> 8 === 3 ? external >>> 16 : 0;
    entries.push({ path, method, compressedSize, size: uncompressed, crc, localOffset, mode });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.path)) throw skillError('PATH_DUPLICATE', `the archive holds '${entry.path.slice(0, 200)}' twice`, { path: entry.path.slice(0, 200) });
    seen.add(entry.path);
  }
  return entries;
}

function findEnd(archive: Buffer): number {
  const lowest = Math.max(0, archive.length - 22 - 0xffff);
  for (let offset = archive.length - 22; offset >= lowest; offset--) {
    if (archive.readUInt32LE(offset) === EOCD) return offset;
  }
  throw corrupt('it has no end-of-directory record');
}

function inflate(archive: Buffer, entry: CentralEntry, path: string): Buffer {
  const at = entry.localOffset;
  if (at + 30 > archive.length || archive.readUInt32LE(at) !== LOCAL) throw corrupt(`the entry '${path}' is not where its directory says`);
  const start = at + 30 + archive.readUInt16LE(at + 26) + archive.readUInt16LE(at + 28);
  if (start + entry.compressedSize > archive.length) throw corrupt(`the entry '${path}' runs past the end of the file`);
  const raw = archive.subarray(start, start + entry.compressedSize);
  let data: Buffer;
  try {
    // The declared size is a ceiling: an entry that inflates past it lied about its size (a bomb's trick).
    data = entry.method === 0 ? Buffer.from(raw) : inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.size) });
  } catch {
    throw corrupt(`the entry '${path}' does not inflate to its declared ${entry.size} bytes`);
  }
  if (data.length !== entry.size) throw corrupt(`the entry '${path}' is ${data.length} bytes, not the ${entry.size} its directory declares`);
  if ((crc32(data) >>> 0) !== entry.crc) throw corrupt(`the entry '${path}' fails its checksum`);
  return data;
}
