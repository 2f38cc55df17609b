import { readFrontMatter } from './front-matter.js';
import { MARKDOWN_LINK, REMOTE_LINK } from '../link-syntax.js';
import { mapOutsideCode } from './outside-code.js';

/**
 * One Obsidian note in Quire's Markdown: front matter to attributes; `[[links]]`, `[[note|alias]]`,
 * `[[note#heading]]` and Markdown links to notes to references `((id "anchor"))`; `![[note]]` alone on a
 * line to an embed block; attachments (`![[image.png]]`, `![](file.pdf)`) to files under `assets/`;
 * `#tag` and `#nested/tag` to `#tag#`. What cannot be mapped is kept as written and reported.
 */
export interface VaultLookup {
  /** A note named by a link, from the linking file (vault-relative path, without .md, or a bare name). */
  note(target: string, fromFile: string): { id: string; file: string } | undefined;
  /** The id a heading of a note gets (assigned once, before any note is parsed). */
  heading(noteId: string, heading: string): string | undefined;
  /** The id the block of a note with this identifier (`^abc`) gets, the same way. */
  block(noteId: string, key: string): string | undefined;
  /** The workspace path (`assets/<name>`) an attachment was copied to. */
  attachment(target: string, fromFile: string): string | undefined;
}

export interface ConvertedNote {
  markdown: string;
  attrs: Record<string, string>;
  report: NoteReport;
}

export interface NoteReport {
  links: number;
  embeds: number;
  tags: number;
  attachments: number;
  /** Links whose note (or heading) is not in the import: kept as text. */
  unresolved: string[];
  /** Links to a block (`#^id`) or a heading the note does not have, made references to the note itself. */
  approximated: string[];
  problems: string[];
}

// Each written so that no text makes them backtrack over a line for every place they start at (a line
// of 200,000 `[` or `/` held the event loop for minutes): a label or target stops at a bracket, a
// destination at a parenthesis, and a tag's "not only digits" is a lookahead, not a split of its run.
const WIKI = /(!?)\[\[([^[\]\n]+?)\]\]/g;
// Obsidian's tag: `#` after a space or line start, letters, digits, `_`, `-`, `/`, not only digits.
const TAG = /(^|[\s([{,;])#(?=[\p{N}_/-]*[\p{L}_/-])([\p{L}\p{N}_/-]+)(?![\p{L}\p{N}_/#-])/gu;
/**
 * A reference with its anchor (`((id "text"))`, either quote), a Markdown link's label (`[text](`, not
 * after a backslash: from an escaped `[` the label's scan ran to the line's end, for each one), or a wiki
 * link left as written (its note not found): text, not tags.
 */
const LINK_TEXT = /\(\(\d{14}-[0-9a-z]{7}[ \t]+(?:"[^"\n]*"|'[^'\n]*')\)\)|(?<!\\)\[(?:[^[\]\n\\]|\\.)*\]\(|\[\[[^[\]\n]*\]\]/g;
/** Quote markers and a list marker before a line's text: an embed alone after them is still alone. */
const CONTAINER_PREFIX = /^(?:[ \t]*>)*[ \t]*(?:[-*+][ \t]+(?:\[[ xX]\][ \t]+)?|\d{1,9}[.)][ \t]+)?/;

export function convertObsidianNote(text: string, file: string, vault: VaultLookup): ConvertedNote {
  const report: NoteReport = { links: 0, embeds: 0, tags: 0, attachments: 0, unresolved: [], approximated: [], problems: [] };
  const front = readFrontMatter(text);
  if (front.problem) report.problems.push(front.problem);
  const markdown = mapOutsideCode(front.body, (prose, context) => {
    // Markdown links first: what the wiki links become is Markdown links, not to be read twice.
    let out = prose.replace(MARKDOWN_LINK, (whole, bang: string, label: string, pointy: string | undefined, bare: string | undefined) =>
      markdownLink(whole, bang === '!', label, pointy ?? bare!.replace(/\\(.)/g, '$1'), file, vault, report));
    const alone = context.wholeLine ? prose.replace(CONTAINER_PREFIX, '').trim() : undefined;
    out = out.replace(WIKI, (whole, bang: string, inner: string) => wikiLink(whole, bang === '!', inner, alone === whole, file, vault, report));
    // A link's text (`[[Note|see #todo]]`, now a reference's anchor, or a Markdown link's label) holds no tags.
    const labels = spansOf(LINK_TEXT, out);
    let label = 0;
    return out.replace(TAG, (whole: string, before: string, tag: string, offset: number, all: string) => {
      // A link's destination (`[Jump](#section)`, left as it was) is no tag.
      if (before === '(' && all.charAt(offset - 1) === ']') return whole;
      while (label < labels.length && labels[label]![1] <= offset) label++;
      if (label < labels.length && labels[label]![0] <= offset) return whole;
      report.tags++;
      return `${before}#${tag}#`;
    });
  });
  return { markdown, attrs: front.attrs, report };
}

function wikiLink(whole: string, embed: boolean, inner: string, alone: boolean, file: string, vault: VaultLookup, report: NoteReport): string {
  const bar = inner.indexOf('|');
  // In a table Obsidian writes the alias's bar as `\|`.
  const target = (bar === -1 ? inner : inner.slice(0, inner.charCodeAt(bar - 1) === 92 ? bar - 1 : bar)).trim();
  const alias = bar === -1 ? undefined : inner.slice(bar + 1).trim();
  const hash = target.indexOf('#');
  const name = hash === -1 ? target : target.slice(0, hash).trim();
  const sub = hash === -1 ? undefined : target.slice(hash + 1).trim();
  // A file other than a note: embedded (`![[photo.png]]`) or linked (`[[paper.pdf]]`).
  if (hasFileExtension(name) && !name.toLowerCase().endsWith('.md')) return attachmentLink(whole, embed, name, alias, file, vault, report);
  const note = name === '' ? vault.note(file.replace(/\.md$/i, ''), file) : vault.note(name, file);
  if (!note) {
    report.unresolved.push(whole);
    return whole;
  }
  let id = note.id;
  if (sub !== undefined && sub !== '') {
    const target = sub.startsWith('^') ? vault.block(note.id, sub.slice(1)) : vault.heading(note.id, sub);
    if (target) id = target;
    else report.approximated.push(whole);
  }
  // Obsidian shows `[[Note.md]]` as "Note".
  const anchor = alias || (hash === -1 ? target.replace(/\.md$/i, '') : target);
  if (embed && alone) {
    report.embeds++;
    return `{{${ref(id, anchor)}}}`;
  }
  report.links++;
  return ref(id, anchor);
}

function markdownLink(whole: string, image: boolean, label: string, href: string, file: string, vault: VaultLookup, report: NoteReport): string {
  if (REMOTE_LINK.test(href) || href.startsWith('#')) return whole;
  let target: string;
  try {
    target = decodeURIComponent(href.split('#')[0]!);
  } catch {
    return whole;
  }
  if (target === '') return whole;
  if (target.toLowerCase().endsWith('.md') && !image) {
    const note = vault.note(target.replace(/\.md$/i, ''), file);
    if (!note) {
      report.unresolved.push(whole);
      return whole;
    }
    report.links++;
    return ref(note.id, label || target.replace(/\.md$/i, ''));
  }
  if (!hasFileExtension(target)) return whole;
  const copied = vault.attachment(target, file);
  if (!copied) {
    report.unresolved.push(whole);
    return whole;
  }
  report.attachments++;
  return image ? `![${label}](${copied})` : `[${label}](${copied})`;
}

function attachmentLink(whole: string, embed: boolean, name: string, alias: string | undefined, file: string, vault: VaultLookup, report: NoteReport): string {
  const copied = vault.attachment(name, file);
  if (!copied) {
    report.unresolved.push(whole);
    return whole;
  }
  report.attachments++;
  const label = alias ?? baseName(name);
  return embed && isImage(name) ? `![${label}](${copied})` : `[${label}](${copied})`;
}

/** `((id "anchor"))`, quoted so the anchor reads back whole. */
export function ref(id: string, anchor: string): string {
  const text = anchor.replace(/\n/g, ' ');
  if (!text.includes('"')) return `((${id} "${text}"))`;
  if (!text.includes("'")) return `((${id} '${text}'))`;
  return `((${id} "${text.replace(/"/g, '”')}"))`;
}

export function hasFileExtension(name: string): boolean {
  return /\.[A-Za-z0-9]{1,8}$/.test(name);
}

export function isImage(name: string): boolean {
  return /\.(?:png|jpe?g|gif|webp|svg|bmp|avif)$/i.test(name);
}

function baseName(path: string): string {
  return path.split('/').pop() ?? path;
}

/** The [start, end) spans of a pattern's matches in a text, in order (the pattern global). */
function spansOf(pattern: RegExp, text: string): [number, number][] {
  const spans: [number, number][] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) spans.push([match.index, match.index + match[0].length]);
  return spans;
}
