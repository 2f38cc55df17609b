import { open } from 'node:fs/promises';
import { KernelError } from '../errors.js';

/** Audit lines are a few hundred bytes; the tail read is far larger than any line. */
const TAIL_BYTES = 1024 * 1024;

export interface LastLine {
  /** The last newline-terminated line, without its newline. */
  line: string | undefined;
  /** Where an unterminated tail starts, when the file does not end with a newline. */
  tornFrom: number | undefined;
}

/** Reads only the end of the file: the last complete line, and where a torn tail starts if there is one. */
export async function readLastLine(file: string): Promise<LastLine> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.alloc(size - start);
    await handle.read(tail, 0, tail.length, start);
    const end = tail.lastIndexOf(0x0a);
    if (end === -1 && start > 0) throw new KernelError('AUDIT_CHAIN_BROKEN', `${file} ends with over ${TAIL_BYTES} bytes that are not a line`);
    const tornFrom = end === tail.length - 1 ? undefined : start + end + 1;
    if (end === -1) return { line: undefined, tornFrom };
    const before = tail.lastIndexOf(0x0a, end - 1);
    if (before === -1 && start > 0) throw new KernelError('AUDIT_CHAIN_BROKEN', `the last line of ${file} is over ${TAIL_BYTES} bytes long`);
    return { line: tail.subarray(before + 1, end).toString('utf8'), tornFrom };
  } finally {
    await handle.close();
  }
}
