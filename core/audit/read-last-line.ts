import { open } from 'node:fs/promises';
import { KernelError } from '../errors.js';

/** Audit lines are a few hundred bytes; the tail read is far larger than any line. */
const TAIL_BYTES = 1024 * 1024;

export interface TailLine {
  /** Offset of the line's first byte in the file. */
  start: number;
  /** The line without its newline. */
  text: string;
}

export interface LogTail {
  size: number;
  /** The last two newline-terminated lines (fewer in a short file), oldest first. */
  lines: TailLine[];
  /** Where an unterminated tail starts, when the file does not end with a newline. */
  tornFrom: number | undefined;
}

/**
 * Reads only the end of the file: its last two complete lines (two, so that when the last one turns out
 * to be torn, the line before it says where the chain really ends) and where an unterminated tail starts.
 */
export async function readTail(file: string): Promise<LogTail> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.alloc(size - start);
    await handle.read(tail, 0, tail.length, start);
    const end = tail.lastIndexOf(0x0a);
    if (end === -1 && start > 0) throw new KernelError('AUDIT_CHAIN_BROKEN', `${file} ends with over ${TAIL_BYTES} bytes that are not a line`, { details: { file } });
    const tornFrom = end === tail.length - 1 ? undefined : start + end + 1;
    const lines: TailLine[] = [];
    for (let lineEnd = end; lineEnd !== -1 && lines.length < 2;) {
      const before = lineEnd === 0 ? -1 : tail.lastIndexOf(0x0a, lineEnd - 1);
      // A line whose beginning lies before the window is not whole: the caller learns it from `start`.
      if (before === -1 && start > 0) break;
      lines.unshift({ start: start + before + 1, text: tail.subarray(before + 1, lineEnd).toString('utf8') });
      lineEnd = before;
    }
    if (end !== -1 && lines.length === 0) throw new KernelError('AUDIT_CHAIN_BROKEN', `the last line of ${file} is over ${TAIL_BYTES} bytes long`, { details: { file } });
    return { size, lines, tornFrom };
  } finally {
    await handle.close();
  }
}
