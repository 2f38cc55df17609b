import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { KernelError } from '../errors.js';

/**
 * Reads a JSON file the kernel owns. Absent ⇒ the fallback; unreadable or unparsable ⇒ an error naming
 * the file (the file is left as it is, so a person can repair it).
 */
export async function readJsonFile<T>(file: string, fallback: T): Promise<T> {
  if (!existsSync(file)) return fallback;
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    throw new KernelError('WORKSPACE_INVALID', `${file}: cannot read: ${(error as Error).message}`, { cause: error, details: { file } });
  }
}
