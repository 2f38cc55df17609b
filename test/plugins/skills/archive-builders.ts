import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

/** One entry of a test archive: any name (even a hostile one), a Unix mode, and for links a target. */
export interface TestEntry {
  name: string;
  data?: string | Buffer;
  /** Unix mode with type bits; default a regular file 0644. */
  mode?: number;
  /** tar only: '2' symlink, '1' hard link, '5' folder… (default '0'). */
  tarType?: string;
  linkTarget?: string;
}

/** A zip written by hand, so tests can make the archives a real tool would refuse to make. */
export function makeZip(entries: readonly TestEntry[], options: { declaredSize?: (entry: TestEntry, real: number) => number } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? entry.linkTarget ?? '', 'utf8');
    const compressed = deflateRawSync(data, { level: 9 });
    const name = Buffer.from(entry.name, 'utf8');
    const crc = crc32(data) >>> 0;
    const size = options.declaredSize ? options.declaredSize(entry, data.length) : data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, compressed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A .tar.gz written by hand (ustar headers), hostile names and links included. */
export function makeTarGz(entries: readonly TestEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? '', 'utf8');
    const header = Buffer.alloc(512);
    header.write(entry.name.slice(0, 100), 0, 'utf8');
    header.write(`${((entry.mode ?? 0o644) & 0o7777).toString(8).padStart(7, '0')}\0`, 100, 'latin1');
    header.write('0000000\0', 108, 'latin1');
    header.write('0000000\0', 116, 'latin1');
    const type = entry.tarType ?? '0';
    const size = type === '0' ? data.length : 0;
    header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
    header.write(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 'latin1');
    header.write('        ', 148, 'latin1');
    header.write(type, 156, 'latin1');
    if (entry.linkTarget) header.write(entry.linkTarget, 157, 'utf8');
    header.write('ustar\u000000', 257, 'latin1');
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    blocks.push(header);
    if (size > 0) blocks.push(data, Buffer.alloc((512 - (size % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
