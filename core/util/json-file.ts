import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { KernelError } from '../errors.js';

/**
 * Reads a JSON file the kernel owns. Absent ⇒ the fallback; unreadable or unparsable ⇒ an error naming
 * the file (the file is left as it is, so a person can repair it).
 */
export async function readJsonFile<T>(file: string, fallback: T): Promise<T> {
  if (!existsSync(file)) return fallback;
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
    return JSON.parse(text) as T;
  } catch (error) {
    throw new KernelError('WORKSPACE_INVALID', `${file}: cannot read: ${jsonProblem(error, text)}`, { cause: error, details: { file } });
  }
}

/**
 * Why a text is not JSON, by place, never quoting it: V8's message quotes the text around the error
 * ("Unexpected token 'B', \"{\"key\": Bearer sk-…\" is not valid JSON"), and a file such as quire.json
 * may hold a secret there, which the message would carry to the terminal and the log.
 */
export function jsonProblem(error: unknown, text: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof SyntaxError)) return message;
  const bare = message.replace(/, ".*is not valid JSON$/s, ': not valid JSON');
  const position = /at position (\d+)/.exec(bare);
  if (!position || text === undefined) return bare;
  const at = Number(position[1]);
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - before.lastIndexOf('\n');
  return bare.replace(/at position \d+.*$/s, `at line ${line}, column ${column}`);
}
