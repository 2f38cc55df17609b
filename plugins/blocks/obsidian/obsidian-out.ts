import { ASSET_LINK, MARKDOWN_LINK, destinationName } from '../link-syntax.js';
import { mapOutsideCode } from './outside-code.js';

/**
 * Quire's Markdown of a document as Obsidian writes it: references `((id "anchor"))` as `[[note]]`,
 * `[[note|anchor]]`, `[[note#heading|anchor]]` or `[[note#^block|anchor]]`; embed blocks as `![[note]]`; `#tag#` as `#tag`;
 * files under `assets/` as `![[name]]` and `[[name]]`. Code is left alone. The inverse of
 * obsidian-in.ts, so that a vault exported and imported again gives the same blocks.
 */
export interface ExportTargets {
  /**
   * The link text of a block's note (its path in the export, or its name when that is unique), the
   * heading when the block is one, else the block's identifier (`^key`) when it has one.
   */
  target(id: string): { note: string; heading?: string; block?: string; isDocument: boolean } | undefined;
}

export interface ExportReport {
  links: number;
  /** References to blocks with no identifier (none of a note, heading or block): they link to the note. */
  approximated: number;
  /** References to notes not in the export, written as their anchor text. */
  outside: number;
  /** Tags Obsidian cannot spell (spaces, punctuation), kept as `#tag#`. */
  tagsKept: number;
  /** `assets/` files linked (to copy beside the notes). */
  assets: Set<string>;
}

const ID = '(\\d{14}-[0-9a-z]{7})';
const ANCHOR = `(?:[ \\t]+(?:"([^"\\n]*)"|'([^'\\n]*)'))?`;
const REF = new RegExp(`\\(\\(${ID}${ANCHOR}\\)\\)`, 'g');
const EMBED_LINE = new RegExp(`^((?:[ \\t]*>)*[ \\t]*(?:[-*+][ \\t]+(?:\\[[ xX]\\][ \\t]+)?|\\d{1,9}[.)][ \\t]+)?)\\{\\{[ \\t]*\\(\\(${ID}${ANCHOR}\\)\\)[ \\t]*\\}\\}[ \\t]*$`);
// A Quire tag as tagAt reads one (no blank at either end), that never runs into a link written here: a
// link to a block or heading holds a `#` (`[[A#^id|x]] about #todo#` left `#todo#` unconverted).
const TAG = /#([^#\s](?:(?:(?!\[\[|\]\])[^#\n])*?[^#\s])?)#/g;
// Linear whatever the text (see obsidian-in.ts): the letter is a lookahead, a label stops at a bracket.
const OBSIDIAN_TAG = /^(?=[\p{N}_/-]*[\p{L}_/-])[\p{L}\p{N}_/-]+$/u;
/** Wiki links, bounded by their brackets (Markdown links are MARKDOWN_LINK, linear too): no tag is read or made there. */
const WIKI_LINK = /!?\[\[[^[\]\n]*\]\]/g;
/** Obsidian reads a tag only at a line's start or after a blank or one of `( [ { , ;` (obsidian-in.ts's TAG). */
const TAG_AFTER = /[\s([{,;]/u;
/**
 * Text Obsidian would read as a tag that is no tag in Quire (`Channel #general is busy`): escaped
 * (`\#general`), or the way back made it one. Not where a Quire tag opens (`#a b#`), converted apart.
 */
const OBSIDIAN_LOOKALIKE = /(^|[\s([{,;])#(?![^#\s](?:[^#\n]*?[^#\s])?#)(?=[\p{N}_/-]*[\p{L}_/-])([\p{L}\p{N}_/-]+)(?![\p{L}\p{N}_/#-])/gu;
// The name may hold escaped parentheses (`a\(1\).png`, as a SiYuan import writes them).

export function newExportReport(): ExportReport {
  return { links: 0, approximated: 0, outside: 0, tagsKept: 0, assets: new Set() };
}

export function toObsidianMarkdown(markdown: string, targets: ExportTargets, report: ExportReport): string {
  return mapOutsideCode(markdown, (prose, context) => {
    // In a table row a link's `|` would end the cell: Obsidian reads `\|` there.
    const bar = context.tableRow ? '\\|' : '|';
    const embed = context.wholeLine ? EMBED_LINE.exec(prose) : null;
    if (embed) {
      const link = linkOf(embed[2]!, targets, report);
      if (link) return `${embed[1]}![[${link}]]`;
    }
    let out = prose.replace(REF, (_whole, id: string, double?: string, single?: string) => {
      const anchor = double ?? single;
      const link = linkOf(id, targets, report);
      if (!link) return anchor ?? id;
      const label = (anchor ?? '').replace(/\]\]|\|/g, ' ').trim();
      return label === '' || label === link ? `[[${link}]]` : `[[${link}${bar}${label}]]`;
    });
    out = out.replace(ASSET_LINK, (_whole, bang: string, label: string, name: string) => {
      const file = destinationName(name);
      report.assets.add(file);
      return label === '' || label === file ? `${bang}[[${file}]]` : `${bang}[[${file}${bar}${label}]]`;
    });
    // Not inside a link's text or target (`[[#Heading]]`, `[Jump](#section)`, an anchor): the import reads no tags there.
    // In order of their ends, walked once as the matches come (a line of many links and many #words stays linear).
    const links = [...out.matchAll(WIKI_LINK), ...out.matchAll(MARKDOWN_LINK)].map((match) => [match.index, match.index + match[0].length] as const).sort((a, b) => a[1] - b[1]);
    let passed = 0;
    out = out.replace(OBSIDIAN_LOOKALIKE, (whole, before: string, word: string, offset: number) => {
      while (passed < links.length && links[passed]![1] <= offset) passed++;
      // Links do not overlap one another: the first one ending after this match is the only one it may be in.
      const inLink = passed < links.length && links[passed]![0] < offset + whole.length;
      return inLink ? whole : `${before}\\#${word}`;
    });
    return out.replace(TAG, (whole, tag: string, offset: number, all: string) => {
      const after = all.charAt(offset + whole.length);
      // Glued to the text before it (`会議#重要#`), `#重要` would be no tag to Obsidian: kept as Quire writes it.
      const placed = offset === 0 ? context.lineStart : TAG_AFTER.test(all.charAt(offset - 1));
      if (!placed || !OBSIDIAN_TAG.test(tag) || /[\p{L}\p{N}_/-]/u.test(after)) {
        report.tagsKept++;
        return whole;
      }
      return `#${tag}`;
    });
  });
}

function linkOf(id: string, targets: ExportTargets, report: ExportReport): string | undefined {
  const target = targets.target(id);
  if (!target) {
    report.outside++;
    return undefined;
  }
  report.links++;
  if (target.heading !== undefined) return `${target.note}#${target.heading.replace(/[#|[\]^]/g, ' ').replace(/\s+/g, ' ').trim()}`;
  if (target.block !== undefined) return `${target.note}#^${target.block}`;
  if (!target.isDocument) report.approximated++;
  return target.note;
}
