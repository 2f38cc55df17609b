import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { PACKAGE_ROOT } from '../../core/paths.js';
import { invalid } from './access.js';

/**
 * The real location of a path (symbolic links resolved, also for a path that does not exist yet),
 * refused when it lies inside the workspace: import and export are for files of the person's own,
 * never for the kernel's documents, sessions, tokens or audit log.
 */
export async function outsideWorkspace(path: string, workspaceRoot: string, field: string, options: { mayContainIt?: boolean; writes?: boolean } = {}): Promise<string> {
  // No file system call takes a NUL byte (Node throws a TypeError, which would reach the caller as an
  // internal error); the manifest's schema refuses it first, this holds for any other caller.
  if (path.includes('\0')) throw invalid(`${field} must not contain a NUL byte`, { field });
  const real = await realPathOf(path);
  const root = await realPathOf(workspaceRoot);
  const inside = isWithin(real, root);
  // Reading a folder that holds the workspace would read the workspace too; writing into one is fine
  // as long as each file written is checked (export does).
  const holds = isWithin(root, real) && options.mayContainIt !== true;
  if (inside || holds) {
    throw invalid(`${field} must lie outside the workspace (${root})`, { field });
  }
  // Nor into the kernel's own folder: its web server hands out files there without a token (an export
  // of a private notebook into dist/web/assets could be read by anyone who can reach the server).
  if (options.writes === true && isWithin(real, await realPathOf(PACKAGE_ROOT))) {
    throw invalid(`${field} must lie outside the kernel's own folder (${PACKAGE_ROOT})`, { field });
  }
  return real;
}

/** `path` is `folder` or lies below it (also when `folder` is the file system's root). */
export function isWithin(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function realPathOf(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  // Bounded by the path's depth: each turn moves one folder up.
  for (;;) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.push(basename(current));
      current = dirname(current);
    }
  }
}
