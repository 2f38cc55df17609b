import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { DraftBlock } from './block-model.js';
import { assetHref, MARKDOWN_LINK, REMOTE_LINK } from './link-syntax.js';
import { mapOutsideCode } from './obsidian/outside-code.js';

/** Where a plain Markdown import's local attachments come from and go. */
export interface AttachmentPlace {
  /** The folder imported (or the file's folder): no link may reach outside it. */
  root: string;
  /** The workspace's `assets/` folder. */
  assets: string;
  /** The workspace: nothing in it is copied (a note beside it linked `workspace/.quire/usage.db`). */
  workspace: string;
}

/** One attachment at most this large is copied; a larger one keeps its link as written, and is said. */
const MAX_ATTACHMENT_BYTES = 256 * 2 ** 20;
const TYPES_WITH_LINKS: ReadonlySet<string> = new Set(['paragraph', 'heading', 'table']);

/**
 * The local files a plain Markdown note links (`![a](img/a.png)`, `[paper](docs/p.pdf)`), relative to
 * the note and inside the folder imported, are copied into the workspace's `assets/` and the links point
 * there (`assets/a.png`), as the Obsidian and SiYuan imports do: a folder of notes came in with every
 * image pointing at a file left behind. A file of the same name and other bytes there already gets its
 * hash in its name; the same bytes are used again. Runs on the parse worker, synchronously (and again on
 * this thread if the chunk is made again: placing is idempotent). Returns how many links now point into
 * `assets/`, and the links left as written (outside the folder, missing, too large).
 */
export function copyLinkedAttachments(drafts: DraftBlock[], notePath: string, place: AttachmentPlace): { linked: number; left: string[] } {
  const result = { linked: 0, left: [] as string[] };
  const placed = new Map<string, string>();
  const visit = (list: DraftBlock[]): void => {
    for (const draft of list) {
      if (draft.children) visit(draft.children);
      else if (TYPES_WITH_LINKS.has(draft.type) && draft.content?.includes('](')) {
        draft.content = mapOutsideCode(draft.content, (prose) => prose.replace(MARKDOWN_LINK, (whole, bang: string, label: string, pointy: string | undefined, bare: string | undefined, title: string) => {
          const target = pointy ?? bare!.replace(/\\(.)/g, '$1');
          if (REMOTE_LINK.test(target) || target.startsWith('#') || /\.(md|markdown)(#.*)?$/i.test(target)) return whole;
          const name = placeOne(target, notePath, place, placed, result);
          if (name !== undefined) result.linked++;
          return name === undefined ? whole : `${bang}[${label}](assets/${assetHref(name)}${title})`;
        }), { comments: false });
      }
    }
  };
  visit(drafts);
  return result;
}

function placeOne(target: string, notePath: string, place: AttachmentPlace, placed: Map<string, string>, result: { left: string[] }): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(target.split('#')[0]!);
  } catch {
    return undefined;
  }
  const leave = (): undefined => {
    result.left.push(target);
    return undefined;
  };
  if (decoded === '') return undefined;
  // A path from the root of the machine (`/etc/hostname`) is no file of the folder imported: said, not copied.
  if (isAbsolute(decoded)) return leave();
  const source = resolve(dirname(notePath), decoded);
  const known = placed.get(source);
  if (known !== undefined) return known;
  try {
    // Where it really is: a link into a linked folder must stay inside the folder imported too, outside
    // the workspace, and no segment of it hidden (`.ssh/id_rsa`, `.env`).
    const real = realpathSync(source);
    const inside = relative(realpathSync(place.root), real);
    if (inside === '' || isAbsolute(inside) || inside.split(sep).some((segment) => segment.startsWith('.'))) return leave();
    const workspace = relative(realpathSync(place.workspace), real);
    if (workspace === '' || !(workspace.startsWith(`..${sep}`) || isAbsolute(workspace))) return leave();
    const info = statSync(real);
    if (!info.isFile() || info.size > MAX_ATTACHMENT_BYTES) return leave();
    const key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
    let name = placedInImport.get(key);
    if (name === undefined) {
      const bytes = readFileSync(real);
      name = placeBytes(bytes, createHash('sha256').update(bytes).digest('hex'), basename(real), place.assets);
      remember(key, name);
    }
    placed.set(source, name);
    return name;
  } catch {
    // Unreadable (a permission, removed meanwhile), or not placeable: its link stays as written, and is said.
    return leave();
  }
}

/**
 * Files placed by this thread, by identity (device, inode, size, time of change): a file many notes
 * link is read and hashed once, not once per note. Bounded; a file changed since has another key.
 */
const placedInImport = new Map<string, string>();

function remember(key: string, name: string): void {
  placedInImport.set(key, name);
  if (placedInImport.size > 10_000) placedInImport.delete(placedInImport.keys().next().value!);
}

/** Puts the bytes in `assets/` under the name, or the name with their hash if another file has it. */
function placeBytes(bytes: Buffer, digest: string, name: string, assets: string): string {
  mkdirSync(assets, { recursive: true });
  const hashed = `${basename(name, extname(name))}-${digest.slice(0, 10)}${extname(name)}`;
  // The last, the whole hash, is another file's only if that file has these very bytes.
  for (const candidate of [name, hashed, `${digest}${extname(name)}`]) {
    const target = join(assets, candidate);
    const present = digestOf(target, bytes.length);
    if (present === digest) return candidate;
    if (present !== undefined) continue;
    // Written beside it (a short name: a long file name must still fit), synced, then linked into place:
    // never a half-written file, and of two imports placing one name at once the second finds the
    // first's (the same bytes, or another name). The temporary file goes whatever happens.
    const temp = join(assets, `.import-${randomBytes(6).toString('hex')}.tmp`);
    try {
      const fd = openSync(temp, 'wx', 0o644);
      try {
        writeFileSync(fd, bytes);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      try {
        linkSync(temp, target);
        syncFolder(assets);
        return candidate;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (digestOf(target, bytes.length) === digest) return candidate;
      }
    } finally {
      rmSync(temp, { force: true });
    }
  }
  throw new Error(`no name in assets/ is free for ${name}`);
}

/** A file's hash, or `size-differs` without reading it when its size is not `size`; undefined when absent. */
function digestOf(path: string, size: number): string | undefined {
  try {
    if (statSync(path).size !== size) return 'size-differs';
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return undefined;
  }
}

function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
