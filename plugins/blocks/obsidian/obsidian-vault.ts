import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { copyFileAtomic, newId } from '../../../core/index.js';
import type { VaultLookup } from './obsidian-in.js';
import { fileDigest } from '../file-digest.js';
import { headingKey } from './heading-key.js';
import { assetHref } from '../link-syntax.js';
import { mapOutsideCode } from './outside-code.js';
import { blockKeysOf } from './block-ids.js';

/** At most this many bytes of attachments per import, so that a mistaken folder cannot fill the disk. */
const MAX_ATTACHMENT_BYTES = 4 * 1024 ** 3;

interface Note { id: string; file: string; key: string }

/**
 * What a vault's links resolve against, built from the whole import before any note is converted
 * (links may point anywhere): notes by vault path and by name, the headings each note has, and the
 * attachments linked, copied once into `<workspace>/assets/`. Names resolve as Obsidian resolves
 * them: a path from the vault root or from the linking note, else a name, the nearest note first.
 */
export class ObsidianVault implements VaultLookup {
  private readonly byPath = new Map<string, Note>();
  private readonly byName = new Map<string, Note[]>();
  private readonly headings = new Map<string, Set<string>>();
  private readonly headingIds = new Map<string, Map<string, string>>();
  /** Per note, its blocks' identifiers (`^abc`), and the ids given out for those a link names. */
  private readonly blockKeys = new Map<string, Set<string>>();
  private readonly blockIds = new Map<string, Map<string, string>>();
  private readonly files = new Map<string, string[]>();
  private readonly wanted = new Set<string>();
  private readonly copied = new Map<string, string>();
  private settled = false;

  constructor(private readonly root: string, notes: { id: string; file: string }[], attachments: string[]) {
    for (const note of notes) {
      const key = this.key(note.file).replace(/\.md$/i, '');
      const entry = { ...note, key };
      this.byPath.set(key, entry);
      const name = key.split('/').pop()!;
      this.byName.set(name, [...(this.byName.get(name) ?? []), entry]);
    }
    for (const file of attachments) {
      const name = basename(file).normalize('NFC').toLowerCase();
      this.files.set(name, [...(this.files.get(name) ?? []), file]);
      this.files.set(this.key(file), [file]);
    }
  }

  /** Records the headings and block identifiers of a note (read before links to them are converted). */
  addHeadings(noteId: string, markdown: string): void {
    const keys = blockKeysOf(markdown);
    if (keys.size > 0) this.blockKeys.set(noteId, keys);
    const found = new Set<string>();
    mapOutsideCode(markdown, (prose, context) => {
      const match = context.lineStart ? /^ {0,3}#{1,6}[ \t]+(.*)$/.exec(prose) : null;
      if (match) found.add(headingKey(withoutClosingHashes(match[1]!)));
      return prose;
    });
    if (found.size > 0) this.headings.set(noteId, found);
  }

  note(target: string, fromFile: string): { id: string; file: string } | undefined {
    // `[[Note.md]]` names the note by its file; typed names are compared in one Unicode form.
    const wanted = target.replace(/\\/g, '/').replace(/^\.\//, '').replace(/^\//, '').replace(/\.md$/i, '').normalize('NFC').toLowerCase();
    if (wanted.includes('/')) {
      const fromHere = this.key(join(dirname(fromFile), wanted));
      return this.byPath.get(fromHere) ?? this.byPath.get(wanted) ?? this.nearest(wanted.split('/').pop()!, fromFile, wanted);
    }
    return this.nearest(wanted, fromFile);
  }

  heading(noteId: string, heading: string): string | undefined {
    const key = headingKey(heading);
    return this.headings.get(noteId)?.has(key) ? idFor(this.headingIds, noteId, key) : undefined;
  }

  block(noteId: string, key: string): string | undefined {
    return this.blockKeys.get(noteId)?.has(key) ? idFor(this.blockIds, noteId, key) : undefined;
  }

  /** The block ids given out for a note: identifier → id, for the parse to assign. */
  blockIdsOf(noteId: string): Record<string, string> | undefined {
    const ids = this.blockIds.get(noteId);
    return ids ? Object.fromEntries(ids) : undefined;
  }

  /** The heading ids given out for a note: heading text (normalised) → id, for the parse to assign. */
  headingIdsOf(noteId: string): Record<string, string> | undefined {
    const ids = this.headingIds.get(noteId);
    return ids ? Object.fromEntries(ids) : undefined;
  }

  attachment(target: string, fromFile: string): string | undefined {
    const wanted = target.replace(/\\/g, '/').replace(/^\.\//, '').replace(/^\//, '').normalize('NFC');
    const candidates = this.files.get(this.key(join(dirname(fromFile), wanted))) ?? this.files.get(wanted.toLowerCase()) ?? this.files.get(basename(wanted).toLowerCase());
    const file = candidates?.[0];
    if (!file) return undefined;
    const copied = this.copied.get(file);
    // Percent-encoded: a Markdown link's target cannot hold spaces ("Pasted image 2024….png").
    if (copied) return `assets/${assetHref(copied.slice('assets/'.length))}`;
    // Copied already and not among them: it could not be read.
    if (this.settled) return undefined;
    // The first pass records what is linked; the files are copied between the passes.
    this.wanted.add(file);
    return `assets/${assetHref(basename(file))}`;
  }

  /**
   * Copies every attachment linked into `<assetsFolder>`: a file already there with the same bytes is
   * reused, another of the same name gets its hash in its name. Returns how many were copied.
   */
  async copyAttachments(assetsFolder: string): Promise<{ copied: number; reused: number; bytes: number }> {
    let bytes = 0;
    // A file removed since the folder was read counts nothing here, and is left out below.
    for (const file of this.wanted) bytes += (await stat(file).catch(() => undefined))?.size ?? 0;
    if (bytes > MAX_ATTACHMENT_BYTES) throw new Error(`the attachments linked add up to ${bytes} bytes, more than ${MAX_ATTACHMENT_BYTES}`);
    await mkdir(assetsFolder, { recursive: true });
    let copied = 0;
    let reused = 0;
    for (const file of this.wanted) {
      const digest = await fileDigest(file);
      // Unreadable now (removed since the folder was read): left out, its links keep their text.
      if (digest === undefined) continue;
      let name = basename(file);
      let present = await fileDigest(join(assetsFolder, name));
      if (present !== undefined && present !== digest) {
        // Another file of that name is there already: this one is named by its content too.
        name = `${basename(file, extname(file))}-${digest.slice(0, 10)}${extname(file)}`;
        present = await fileDigest(join(assetsFolder, name));
      }
      if (present === digest) reused++;
      else if (await placeOnce(file, join(assetsFolder, name), present === undefined)) copied++;
      else if ((await fileDigest(join(assetsFolder, name))) === digest) reused++;
      else {
        // Made meanwhile, with other bytes (another import at the same time): this one named by its content.
        name = `${basename(file, extname(file))}-${digest.slice(0, 10)}${extname(file)}`;
        await copyFileAtomic(file, join(assetsFolder, name));
        copied++;
      }
      this.copied.set(file, `assets/${name}`);
    }
    this.settled = true;
    return { copied, reused, bytes };
  }

  private nearest(name: string, fromFile: string, path?: string): Note | undefined {
    const notes = this.byName.get(name);
    if (!notes || notes.length === 0) return undefined;
    if (notes.length === 1) return notes[0];
    const here = this.key(dirname(fromFile));
    const tail = path ? notes.filter((note) => note.key.endsWith(path)) : [];
    if (tail.length === 1) return tail[0];
    // Obsidian: the note in the linking note's folder, else the one nearest the vault root.
    return notes.find((note) => note.key.slice(0, note.key.lastIndexOf('/') + 1) === `${here}/`.replace(/^\//, ''))
      ?? [...notes].sort((a, b) => a.key.split('/').length - b.key.split('/').length || a.key.localeCompare(b.key))[0];
  }

  /** A path inside the vault as a lower-case key with `/`. */
  /** A file's path in the vault as links name it: `/` between folders, one case, one Unicode form (macOS writes NFD names). */
  private key(file: string): string {
    return relative(this.root, file).split(sep).join('/').normalize('NFC').toLowerCase();
  }
}

/**
 * A heading's text without its closing `#`s and the blanks around them, as `(.*?)(?:[ \t]+#+)?[ \t]*$`
 * read it, in one pass from the end (that expression took quadratic time on a line of blanks).
 */
function withoutClosingHashes(text: string): string {
  const blank = (at: number): boolean => text[at] === ' ' || text[at] === '\t';
  let end = text.length;
  while (end > 0 && blank(end - 1)) end--;
  let hashes = end;
  while (hashes > 0 && text[hashes - 1] === '#') hashes--;
  if (hashes < end && hashes > 0 && blank(hashes - 1)) {
    end = hashes;
    while (end > 0 && blank(end - 1)) end--;
  }
  return text.slice(0, end);
}

/**
 * Copies `file` to `target`; when `absent` (none was there), only if none is there still: false when
 * one was made meanwhile (two imports at once both found it missing, and the second's copy replaced the
 * first's attachment under the first's notes).
 */
async function placeOnce(file: string, target: string, absent: boolean): Promise<boolean> {
  try {
    await copyFileAtomic(file, target, { exclusive: absent });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The id given out for a note's heading or block, given once. */
function idFor(given: Map<string, Map<string, string>>, noteId: string, key: string): string {
  let ids = given.get(noteId);
  if (!ids) given.set(noteId, ids = new Map());
  let id = ids.get(key);
  if (!id) ids.set(key, id = newId());
  return id;
}
