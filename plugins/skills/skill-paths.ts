import { constants } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { skillError, type SkillLimits } from './skill-limits.js';

/**
 * A path inside a skill, as given by a model, an archive or a person: relative, forward slashes, no
 * `..`, no empty or `.` segments, no drive letters, no control characters. Returns it normalised.
 */
export function checkRelativePath(path: string, where = 'the path'): string {
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) {
    throw skillError('PATH_ABSOLUTE', `${where} '${path.slice(0, 200)}' is absolute; paths in a skill are relative to its folder`, { path: path.slice(0, 200) });
  }
  // A backslash is a separator on Windows: treated as one, so that 'a\..\..\x' is seen for what it is.
  const segments = path.split(/[\\/]/);
  if (segments.includes('..')) throw skillError('PATH_ESCAPES', `${where} '${path.slice(0, 200)}' climbs out of the skill's folder with '..'`, { path: path.slice(0, 200) });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path) || path.includes('\\')) throw skillError('PATH_INVALID', `${where} '${path.slice(0, 200)}' holds control characters or backslashes`, { path: path.slice(0, 200) });
  const kept = segments.filter((segment) => segment !== '' && segment !== '.');
  if (kept.length === 0) throw skillError('PATH_INVALID', `${where} '${path.slice(0, 200)}' names no file`, { path: path.slice(0, 200) });
  // The whole path too: twenty segments of 250 passed, and the write failed with a raw ENAMETOOLONG.
  if (kept.some((segment) => Buffer.byteLength(segment) > 255) || kept.length > 32 || Buffer.byteLength(kept.join('/')) > 1024) {
    throw skillError('PATH_INVALID', `${where} is too long or too deep (at most 32 segments of 255 bytes, 1,024 bytes in all)`, { path: path.slice(0, 200) });
  }
  return kept.join('/');
}

/**
 * Refuses a set of files that cannot all be written: a path given twice, two that one file system
 * takes for one (case, Unicode form: `SKILL.md` and `skill.md`), or a file whose path is a folder of
 * another's (`a` and `a/b`). Each of these failed half way through a write, with a raw file system error.
 */
export function checkFileSet(paths: readonly string[], what: string): void {
  const byKey = new Map<string, string>();
  for (const path of paths) {
    const key = path.normalize('NFC').toLowerCase();
    const twin = byKey.get(key);
    if (twin !== undefined) {
      throw skillError('PATH_DUPLICATE', twin === path ? `${what} holds '${path}' twice` : `${what} holds '${twin}' and '${path}', which a file system that ignores case or Unicode form takes for one file`, { path: path.slice(0, 200) });
    }
    byKey.set(key, path);
  }
  for (const [key, path] of byKey) {
    const parts = key.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const file = byKey.get(parts.slice(0, depth).join('/'));
      if (file !== undefined) throw skillError('PATH_DUPLICATE', `${what} holds '${file}' as a file and as a folder of '${path}'`, { path: path.slice(0, 200) });
    }
  }
}

export interface FolderFile {
  /** Relative, forward slashes. */
  path: string;
  size: number;
  mode: number;
}

export interface FolderScan {
  files: FolderFile[];
  /** Symbolic links found (never followed), and anything that is neither a file nor a folder. */
  links: string[];
  others: string[];
  /** Every folder walked, '' for the skill's own: their times tell whether the scan still holds. */
  folders: string[];
  bytes: number;
}

/** Everything in a skill's folder, without following any link; stops counting past `maxFiles`. */
export async function scanFolder(root: string, maxFiles: number): Promise<FolderScan> {
  const scan: FolderScan = { files: [], links: [], others: [], folders: [], bytes: 0 };
  const walk = async (folder: string, prefix: string): Promise<void> => {
    scan.folders.push(prefix);
    for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) => byCodePoint(a.name, b.name))) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isSymbolicLink()) scan.links.push(path);
      else if (entry.isDirectory()) await walk(join(folder, entry.name), path);
      else if (!entry.isFile()) scan.others.push(path);
      else {
        const stats = await lstat(join(folder, entry.name));
        scan.files.push({ path, size: stats.size, mode: stats.mode });
        scan.bytes += stats.size;
      }
      if (scan.files.length > maxFiles) return;
    }
  };
  await walk(root, '');
  return scan;
}

/**
 * One file of a skill, read only if it stays inside the folder: every segment is checked to be no
 * link, the file is opened without following a link, and its real path must lie under the folder's.
 */
export async function readInside(root: string, relative: string, maxBytes: number): Promise<Buffer> {
  const path = checkRelativePath(relative, 'the file');
  const segments = path.split('/');
  let current = root;
  let size = 0;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    const stats = await lstat(current).catch(() => undefined);
    if (!stats) throw skillError('SKILL_NOT_FOUND', `the skill has no file '${path}'`, { file: path });
    if (stats.isSymbolicLink()) throw skillError('LINK', `'${segments.slice(0, index + 1).join('/')}' is a symbolic link; links in a skill are never followed`, { file: path });
    if (index < segments.length - 1 && !stats.isDirectory()) throw skillError('SKILL_NOT_FOUND', `the skill has no file '${path}'`, { file: path });
    if (index === segments.length - 1 && !stats.isFile()) throw skillError('NOT_A_FILE', `'${path}' is not a file`, { file: path });
    if (index === segments.length - 1 && stats.size > maxBytes) throw skillError('FILE_TOO_LARGE', `'${path}' is ${stats.size} bytes, more than the ${maxBytes} a file of a skill may have`, { file: path, bytes: stats.size, limit: maxBytes });
    size = stats.size;
  }
  const realRoot = await realpath(root);
  const realFile = await realpath(current);
  if (!realFile.startsWith(realRoot + sep)) throw skillError('PATH_ESCAPES', `'${path}' lies outside the skill's folder`, { file: path });
  const handle = await open(current, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    // Sized by the file (a buffer of the limit for each file held a skill of many small files at
    // hundreds of MB); one byte more, and grown up to the limit, to see a file that grew since.
    let buffer = Buffer.alloc(size + 1);
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, read, buffer.length - read, read);
      read += bytesRead;
      if (bytesRead === 0 || read < buffer.length || buffer.length > maxBytes) break;
      const grown = Buffer.alloc(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(grown, 0, 0, read);
      buffer = grown;
    }
    if (read > maxBytes) throw skillError('FILE_TOO_LARGE', `'${path}' is more than the ${maxBytes} bytes a file of a skill may have`, { file: path, limit: maxBytes });
    return buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

const SCRIPT_EXTENSIONS = new Set(['sh', 'bash', 'zsh', 'fish', 'py', 'js', 'mjs', 'cjs', 'ts', 'rb', 'pl', 'php', 'ps1', 'psm1', 'bat', 'cmd', 'exe', 'com', 'jar', 'lua', 'r', 'applescript', 'vbs']);

/** Whether a file looks like something meant to run: a script's extension, an executable bit, or a `#!` line. */
export async function looksLikeScript(root: string, file: FolderFile): Promise<boolean> {
  if (isScript(file.path, file.mode)) return true;
  if (file.size < 2) return false;
  const handle = await open(join(root, ...file.path.split('/')), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(2);
    await handle.read(head, 0, 2, 0);
    return isScript(file.path, 0, head);
  } finally {
    await handle.close();
  }
}

/** The same judgement from a file's name, mode and first bytes. */
export function isScript(path: string, mode: number, head?: Uint8Array): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return SCRIPT_EXTENSIONS.has(extension) || (mode & 0o111) !== 0 || (head !== undefined && head[0] === 0x23 && head[1] === 0x21);
}

export function isTextBuffer(data: Uint8Array): boolean {
  return !data.includes(0);
}

/** Code-point order: the same on every machine, whatever its locale. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Every file of a skill's folder as read now, or undefined when there is no folder (a link is none):
 * for keeping a version of it and for a save that keeps a broken skill's other files. Past the skill
 * limits it is refused (`tooLarge`), before anything changes.
 */
export async function readSkillFolder(folder: string, limits: Pick<SkillLimits, 'maxSkillFiles' | 'maxSkillBytes'>, tooLarge: () => Error): Promise<{ path: string; data: Buffer }[] | undefined> {
  if (!(await lstat(folder).catch(() => undefined))?.isDirectory()) return undefined;
  const scan = await scanFolder(folder, limits.maxSkillFiles);
  if (scan.files.length > limits.maxSkillFiles || scan.bytes > limits.maxSkillBytes) throw tooLarge();
  const files: { path: string; data: Buffer }[] = [];
  let bytes = 0;
  for (const file of scan.files) {
    const data = await readInside(folder, file.path, limits.maxSkillBytes);
    // Files that grew since the scan count as read: the version kept is never past the skill's limit.
    bytes += data.length;
    if (bytes > limits.maxSkillBytes) throw tooLarge();
    files.push({ path: file.path, data });
  }
  return files;
}

/**
 * A text file past `maxFileBytes`, refused when a skill is written: it was enforced only when read, so a
 * skill could be installed whose file the agent could never load. Other files (templates, images) are
 * never loaded as text, and only the skill's whole size bounds them.
 */
export function checkFileSizes(files: readonly { path: string; data: Buffer }[], maxFileBytes: number, where: string): void {
  const large = files.find((file) => file.data.length > maxFileBytes && isTextBuffer(file.data));
  if (large) throw skillError('FILE_TOO_LARGE', `'${large.path}' of ${where} is ${large.data.length} bytes, more than the ${maxFileBytes} one file of a skill may have (plugins.skills.config.maxFileBytes)`, { path: large.path, bytes: large.data.length, limit: maxFileBytes });
}
