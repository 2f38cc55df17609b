import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isTar, readTar, readTarGz } from './archive-tar.js';
import { readZip } from './archive-zip.js';
import { parseSkillDocument, type SkillDocument } from './skill-document.js';
import { skillError, type SkillLimits } from './skill-limits.js';
import { byCodePoint, checkFileSet, checkFileSizes, checkRelativePath, isTextBuffer } from './skill-paths.js';

/** One file of a package, in memory, with a checked relative path. */
export interface PackageFile {
  path: string;
  data: Buffer;
  mode: number;
}

/** What a whole package (several skills at most ten skills' worth) may hold. */
export interface PackageLimits {
  maxFiles: number;
  maxBytes: number;
  maxRatio: number;
}

/** One skill of a package, ready to be written: its files relative to its own folder. */
export interface PackagedSkill {
  name: string;
  /** Where its SKILL.md was in the package. */
  from: string;
  document: SkillDocument;
  files: PackageFile[];
}

export function packageLimits(limits: SkillLimits): PackageLimits {
  return { maxFiles: limits.maxSkillFiles * 10, maxBytes: limits.maxSkillBytes * 10, maxRatio: limits.maxCompressionRatio };
}

/** Files a package carries that are an archiver's, not the author's (macOS resource forks). */
const isArchiverJunk = (path: string) => path.startsWith('__MACOSX/') || path.split('/').some((segment) => segment.startsWith('._'));

/** The files of an archive held in memory, by what its bytes are (zip, gzip, or a lone SKILL.md), not by its name. */
export function readArchive(data: Buffer, limits: SkillLimits, what: string): PackageFile[] {
  const packed = packageLimits(limits);
  if (data.length >= 4 && data.readUInt32LE(0) === 0x04034b50) return readZip(data, packed);
  if (data.length >= 4 && data.readUInt32LE(0) === 0x06054b50) throw skillError('NO_SKILL', `${what} is an empty zip archive`);
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) return readTarGz(data, packed);
  if (isTar(data)) return readTar(data, packed);
  if (isTextBuffer(data) && /^\uFEFF?---\r?\n/.test(data.toString('utf8', 0, 16))) return [{ path: 'SKILL.md', data, mode: 0o644 }];
  throw skillError('ARCHIVE_UNSUPPORTED', `${what} is neither a .zip, a .tar nor a .tar.gz archive, nor a SKILL.md`);
}

/** A file on disk, at most `maxBytes` (the archive limit), read without following a link. */
export async function readArchiveFile(path: string, limits: SkillLimits): Promise<Buffer> {
  const stats = await lstat(path).catch(() => undefined);
  if (!stats) throw skillError('SKILL_NOT_FOUND', `there is no file or folder at ${path}`, { path });
  if (stats.isSymbolicLink()) throw skillError('LINK', `${path} is a symbolic link; give the path of the archive itself`, { path });
  if (!stats.isFile()) throw skillError('NOT_A_FILE', `${path} is neither a folder nor a file`, { path });
  if (stats.size > limits.maxArchiveBytes) throw skillError('ARCHIVE_TOO_LARGE', `${path} is ${stats.size} bytes, more than the ${limits.maxArchiveBytes} an archive may have`, { path, bytes: stats.size, limit: limits.maxArchiveBytes });
  const handle = await open(path, 'r');
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Every file under a folder on disk; a link anywhere refuses the whole folder (nothing is half installed). */
export async function readFolder(root: string, limits: SkillLimits): Promise<PackageFile[]> {
  const packed = packageLimits(limits);
  const files: PackageFile[] = [];
  let bytes = 0;
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) => byCodePoint(a.name, b.name))) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.name === '.git') continue;
      // Checked as an archive's paths are: names with backslashes or control characters were installed
      // from a folder, and could then not be loaded.
      checkRelativePath(path, `${root}:`);
      if (entry.isSymbolicLink()) throw skillError('LINK', `${join(root, path)} is a symbolic link; links are never installed`, { path });
      if (entry.isDirectory()) { await walk(join(folder, entry.name), path); continue; }
      if (!entry.isFile()) throw skillError('NOT_A_FILE', `${join(root, path)} is not a regular file`, { path });
      const stats = await lstat(join(folder, entry.name));
      bytes += stats.size;
      if (files.length + 1 > packed.maxFiles) throw skillError('TOO_MANY_FILES', `${root} holds more than the ${packed.maxFiles} files a package may have`, { limit: packed.maxFiles });
      if (bytes > packed.maxBytes) throw skillError('ARCHIVE_TOO_LARGE', `${root} holds more than the ${packed.maxBytes} bytes a package may have`, { limit: packed.maxBytes });
      const handle = await open(join(folder, entry.name), 'r');
      try {
        files.push({ path, data: await handle.readFile(), mode: stats.mode & 0o777 });
      } finally {
        await handle.close();
      }
    }
  };
  await walk(root, '');
  return files;
}

/**
 * The skills of a package: each folder holding a SKILL.md (with everything under it) is one skill,
 * named by its front matter (an archive's folder names are often not the skill's: repo-main/).
 * Files outside any skill are left out and reported. Every SKILL.md is checked, names must differ,
 * and each skill must keep to a skill's limits.
 */
export function groupPackage(files: PackageFile[], limits: SkillLimits, what: string): { skills: PackagedSkill[]; ignored: string[] } {
  // Paths are compared as written to disk: 'a/./b' and 'a/b' are one file.
  checkFileSet(files.map((file) => file.path), what);
  const kept = files.filter((file) => !isArchiverJunk(file.path));
  const ignored = files.filter((file) => isArchiverJunk(file.path)).map((file) => file.path);
  const folderOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
  const roots = kept.filter((file) => file.path === 'SKILL.md' || file.path.endsWith('/SKILL.md')).map((file) => folderOf(file.path))
    .sort((a, b) => a.split('/').length - b.split('/').length || byCodePoint(a, b));
  const chosen: string[] = [];
  for (const root of roots) if (!chosen.some((outer) => inside(root, outer))) chosen.push(root);
  if (chosen.length === 0) throw skillError('NO_SKILL', `${what} holds no SKILL.md`);
  const skills: PackagedSkill[] = [];
  for (const root of chosen) {
    const own = kept.filter((file) => inside(file.path, root) && !chosen.some((other) => other !== root && other.length > root.length && inside(file.path, other)));
    const relative = own.map((file) => ({ ...file, path: root === '' ? file.path : file.path.slice(root.length + 1) }));
    const from = root === '' ? 'SKILL.md' : `${root}/SKILL.md`;
    const skillMd = relative.find((file) => file.path === 'SKILL.md')!;
    if (!isTextBuffer(skillMd.data)) throw skillError('NOT_TEXT', `${from} in ${what} is not text`, { path: from });
    const document = parseSkillDocument(skillMd.data.toString('utf8'), { maxBodyChars: limits.maxBodyChars, path: `${from} in ${what}` });
    if (relative.length > limits.maxSkillFiles) throw skillError('TOO_MANY_FILES', `the skill '${document.name}' holds ${relative.length} files, more than the ${limits.maxSkillFiles} allowed`, { path: from, limit: limits.maxSkillFiles });
    const bytes = relative.reduce((sum, file) => sum + file.data.length, 0);
    if (bytes > limits.maxSkillBytes) throw skillError('SKILL_TOO_LARGE', `the skill '${document.name}' holds ${bytes} bytes, more than the ${limits.maxSkillBytes} allowed`, { path: from, bytes, limit: limits.maxSkillBytes });
    checkFileSizes(relative, limits.maxFileBytes, `the skill '${document.name}'`);
    const twin = skills.find((skill) => skill.name === document.name);
    if (twin) throw skillError('NAME_DUPLICATE', `${what} holds two skills named '${document.name}' (${twin.from} and ${from})`, { name: document.name, paths: [twin.from, from] });
    skills.push({ name: document.name, from, document, files: relative });
  }
  for (const file of kept) if (!chosen.some((root) => inside(file.path, root))) ignored.push(file.path);
  return { skills, ignored };
}

function inside(path: string, folder: string): boolean {
  return folder === '' || path === folder || path.startsWith(`${folder}/`);
}
