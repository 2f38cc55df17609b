import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KernelError } from '../errors.js';

/** What only a Quire workspace holds at its top (or a person prepares for one: skills, AGENTS.md). */
const WORKSPACE_MARKS = ['.quire', 'quire.json', 'data', 'plugins', 'models', 'skills', 'AGENTS.md', 'index', 'audit', 'history', 'repo', 'agent'];
/** What a system or a sync tool leaves in any folder: a folder holding only these is empty. */
const LEFT_BY_OTHERS = new Set(['.DS_Store', '.git', '.gitignore', '.stfolder', '.stignore', 'lost+found', 'Thumbs.db', 'desktop.ini']);

/**
 * A command other than `serve --init` opens only a workspace that is there: a mistyped path made a new,
 * empty workspace at it, and the command answered as if the notes were gone (exit 0).
 */
export function assertWorkspaceExists(root: string): void {
  const hint = 'check the path (quire serve --workspace <dir> --init makes a new one)';
  if (!existsSync(root)) {
    throw new KernelError('NOT_FOUND', `there is no workspace at ${resolve(root)}: ${hint}`, { details: { field: 'workspace' } });
  }
  if (!statSync(root).isDirectory()) throw new KernelError('NOT_FOUND', `${resolve(root)} is a file, not a workspace: ${hint}`, { details: { field: 'workspace' } });
  // A folder of something else (a folder of notes, the home folder) is not made a workspace: one was
  // written into it, a Welcome notebook and all, and the command answered 0. A workspace holds what Quire
  // makes (its private folder, data/, plugins/) or the quire.json a person wrote; an empty folder is one to begin in.
  if (!WORKSPACE_MARKS.some((name) => existsSync(join(root, name))) && readdirSync(root).some((name) => !LEFT_BY_OTHERS.has(name))) {
    throw new KernelError('NOT_FOUND', `${resolve(root)} is a folder of other files, not a Quire workspace (none of ${WORKSPACE_MARKS.slice(0, 5).join(', ')} in it), and nothing was written to it: ${hint}`, { details: { field: 'workspace' } });
  }
}
