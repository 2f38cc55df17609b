import { gunzipSync } from 'node:zlib';
import { RATIO_FLOOR_BYTES, skillError } from './skill-limits.js';
import { checkRelativePath } from './skill-paths.js';
import type { PackageFile, PackageLimits } from './skill-package.js';

const BLOCK = 512;
const corrupt = (why: string) => skillError('ARCHIVE_CORRUPT', `the tar archive is damaged: ${why}`);

/**
 * A .tar.gz read whole in memory: gunzipped with a ceiling (the ratio limit or the size limit,
 * whichever is lower, so a bomb stops at the first of them), then every header checked (path, type,
 * size) before any file is returned. Links, devices and FIFOs are refused, never skipped silently.
 */
export function readTarGz(archive: Buffer, limits: PackageLimits): PackageFile[] {
  const byRatio = Math.max(RATIO_FLOOR_BYTES, archive.length * limits.maxRatio);
  // Headers and padding take up to two blocks a file beyond the files' bytes.
  const bySize = limits.maxBytes + (limits.maxFiles + 2) * 2 * BLOCK;
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: Math.min(byRatio, bySize) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE' && !(error instanceof RangeError)) throw corrupt('it does not decompress');
    if (byRatio <= bySize) throw skillError('ARCHIVE_RATIO', `the archive expands more than ${limits.maxRatio} times (${archive.length} compressed bytes): refused as a likely zip bomb`);
    throw skillError('ARCHIVE_TOO_LARGE', `the archive expands past the ${limits.maxBytes} bytes allowed`, { limit: limits.maxBytes });
  }
  return readTar(tar, limits);
}

/** Whether the bytes are a tar archive (POSIX or GNU: `ustar` in the first header). */
export function isTar(data: Buffer): boolean {
  return data.length >= BLOCK && data.toString('latin1', 257, 262) === 'ustar';
}

/** A plain .tar, read as the contents of a .tar.gz are (every header checked before any file is returned). */
export function readTar(tar: Buffer, limits: PackageLimits): PackageFile[] {
  const files: PackageFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  let offset = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  let entries = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    if (!checksumMatches(header)) throw corrupt(`the header at byte ${offset} fails its checksum`);
    if (++entries > limits.maxFiles * 2 + 10) throw skillError('TOO_MANY_FILES', `the archive holds more than ${limits.maxFiles} entries`, { limit: limits.maxFiles });
    const type = String.fromCharCode(header[156]!);
    const size = octal(header.subarray(124, 136), offset);
    const dataStart = offset + BLOCK;
    if (dataStart + size > tar.length) throw corrupt(`the entry at byte ${offset} runs past the end`);
    const data = tar.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L') { longName = text(data); continue; }
    if (type === 'x') { paxPath = paxRecords(data).get('path') ?? paxPath; continue; }
    if (type === 'g' || type === 'K') continue;
    const rawName = paxPath ?? longName ?? headerName(header);
    longName = paxPath = undefined;
    const isFolder = type === '5' || rawName.endsWith('/');
    const path = checkRelativePath(rawName.endsWith('/') ? rawName.slice(0, -1) : rawName, 'the archive entry');
    if (type === '1' || type === '2') throw skillError('LINK', `the archive entry '${path}' is a ${type === '2' ? 'symbolic' : 'hard'} link; links are never installed`, { path });
    if (isFolder) continue;
    if (type !== '0' && type !== '\0' && type !== '7') throw skillError('NOT_A_FILE', `the archive entry '${path}' is not a regular file (tar type '${type}')`, { path });
    if (seen.has(path)) throw skillError('PATH_DUPLICATE', `the archive holds '${path}' twice`, { path });
    seen.add(path);
    total += size;
    if (total > limits.maxBytes) throw skillError('ARCHIVE_TOO_LARGE', `the archive's files add up to more than the ${limits.maxBytes} bytes allowed`, { limit: limits.maxBytes });
    files.push({ path, data: Buffer.from(data), mode: octal(header.subarray(100, 108), offset) & 0o777 });
  }
  if (files.length > limits.maxFiles) throw skillError('TOO_MANY_FILES', `the archive holds ${files.length} files, more than the ${limits.maxFiles} allowed`, { limit: limits.maxFiles });
  return files;
}

function headerName(header: Buffer): string {
  const name = text(header.subarray(0, 100));
  const ustar = header.subarray(257, 262).toString('latin1') === 'ustar';
  const prefix = ustar ? text(header.subarray(345, 500)) : '';
  return prefix ? `${prefix}/${name}` : name;
}

function text(data: Buffer): string {
  const end = data.indexOf(0);
  return data.subarray(0, end < 0 ? data.length : end).toString('utf8');
}

function octal(field: Buffer, at: number): number {
  // Base-256 sizes (high bit set) are for files past 8 GiB: no skill has one.
  if ((field[0]! & 0x80) !== 0) throw corrupt(`the entry at byte ${at} declares a size too large for a skill`);
  const value = text(field).trim();
  if (value === '') return 0;
  if (!/^[0-7]+$/.test(value)) throw corrupt(`the entry at byte ${at} has a malformed number`);
  return parseInt(value, 8);
}

function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let index = 0; index < BLOCK; index++) sum += index >= 148 && index < 156 ? 32 : header[index]!;
  const stored = text(header.subarray(148, 156)).trim();
  return /^[0-7]+$/.test(stored) && parseInt(stored, 8) === sum;
}

/** A pax extended header: records "<length> <key>=<value>\n". */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) break;
    const length = parseInt(data.subarray(offset, space).toString('latin1'), 10);
    if (!Number.isFinite(length) || length <= 0) throw corrupt('a pax header is malformed');
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}
