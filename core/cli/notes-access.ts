import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { findServingKernel } from '../http/serve-address.js';
import { KernelClient } from './chat/kernel-client.js';
import type { CliIO } from './cli-io.js';
import { callAction, withKernel } from './one-shot-kernel.js';

/** Calls actions by wire name and plugin path, as the person at the terminal. */
export type ActionCaller = <T = Record<string, unknown>>(wireName: string, path: string, input: Record<string, unknown>) => Promise<T>;

/**
 * Runs `work` against the workspace: over HTTP to the kernel serving it when there is one (with the
 * admin token of `.quire/admin.token`, or QUIRE_TOKEN), else on a kernel opened for this command.
 */
export async function withNotes<T>(root: string, io: CliIO, work: (call: ActionCaller) => Promise<T>): Promise<T> {
  const serving = await findServingKernel(root);
  if (serving) {
    const fromEnvironment = process.env.QUIRE_TOKEN?.trim() ?? '';
    const token = fromEnvironment || (await readFile(join(root, '.quire', 'admin.token'), 'utf8').catch(() => '')).trim();
    if (token === '') throw new KernelError('UNAUTHENTICATED', `the workspace is served at ${serving.url}, but neither QUIRE_TOKEN nor .quire/admin.token gives a token to talk to it with`);
    const client = new KernelClient(serving.url, token);
    return work(async <T,>(_wire: string, path: string, input: Record<string, unknown>) => {
      try {
        return (await client.json<{ result: T }>('POST', `/api/actions/${path}`, input)).result;
      } catch (error) {
        // A stale QUIRE_TOKEN (another workspace's, a reader's) was taken before the admin token, unsaid.
        if (error instanceof KernelError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN')) {
          error.message += ` (the token used: ${fromEnvironment ? 'QUIRE_TOKEN, which comes before .quire/admin.token' : '.quire/admin.token'})`;
        }
        throw error;
      }
    });
  }
  return withKernel(root, io, (kernel) => work(async <T,>(wire: string, _path: string, input: Record<string, unknown>) => await callAction(kernel, wire, input) as T));
}

const ID = /^\d{14}-[0-9a-z]{7}$/;

interface Listed { id: string; name?: string; title?: string }

/** The entries named exactly `name`, else those named so but for case (a name on the command line). */
export function namedAs<E extends Listed>(list: readonly E[], name: string, key: 'name' | 'title'): E[] {
  const exact = list.filter((entry) => entry[key] === name);
  return exact.length > 0 ? exact : list.filter((entry) => entry[key]?.toLowerCase() === name.toLowerCase());
}

/**
 * A document named by its id or by its path of names (`Notebook/Document/Child`, as `hpath` shows
 * it, with or without the notebook): each step matched by exact name, then case-insensitively.
 */
export async function resolveDocument(call: ActionCaller, given: string): Promise<string> {
  if (ID.test(given)) return given;
  const parts = given.split('/').map((part) => part.trim()).filter((part) => part !== '');
  if (parts.length === 0) throw new KernelError('INVALID_INPUT', 'give a document id or a path such as Notebook/Document', { details: { field: 'path' } });
  const { notebooks } = await call<{ notebooks: Listed[] }>('notebook_list', 'blocks/notebook/list', {});
  const pick = <E extends Listed>(list: E[], name: string, key: 'name' | 'title'): E | undefined => namedAs(list, name, key)[0];
  const starts = pick(notebooks, parts[0]!, 'name') ? [pick(notebooks, parts[0]!, 'name')!] : notebooks;
  const rest = pick(notebooks, parts[0]!, 'name') ? parts.slice(1) : parts;
  for (const notebook of starts) {
    let parent: string | undefined;
    let found: string | undefined;
    for (const name of rest) {
      const { documents } = await call<{ documents: Listed[] }>('document_list', 'blocks/document/list', { notebook: notebook.id, ...(parent ? { parentId: parent } : {}) });
      found = pick(documents, name, 'title')?.id;
      if (!found) break;
      parent = found;
    }
    if (found && rest.length > 0) return found;
  }
  throw new KernelError('NOT_FOUND', `no document at '${given}'`, { details: { path: given } });
}
