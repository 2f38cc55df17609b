import { parse, stringify, type ScalarTag, type Tags } from 'yaml';

/**
 * Obsidian's YAML front matter (its "properties") as document attributes and back. Each key becomes
 * `custom-<key>`: a string as itself, any other value (a list, a number, a date, true) as its JSON, and
 * a string that would read back as JSON (`"123"`, `"true"`) as a JSON string, so that every value
 * returns with its type. A number keeps its spelling (`1.10`, a 20-digit id, `1e3`), inside lists and
 * maps too; one JSON cannot spell (`01234`, `0x1F`, `.inf`) is kept as the string it reads as.
 * Keys that are not valid attribute names (spaces, accents, over 56 characters)
 * are renamed, and the original names kept in `custom-frontmatter-keys`.
 */
export const KEYS_ATTR = 'custom-frontmatter-keys';
const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export interface FrontMatter {
  attrs: Record<string, string>;
  /** The note without its front matter. */
  body: string;
  problem?: string;
}

export function readFrontMatter(source: string): FrontMatter {
  // A byte order mark before the first rule is no part of the note.
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const match = FRONT_MATTER.exec(text);
  if (!match) return { attrs: {}, body: text };
  const body = text.slice(match[0].length);
  let value: unknown;
  try {
    value = parse(match[1]!, { maxAliasCount: 100, customTags: numbersAsSpelt });
  } catch (error) {
    // Kept whole, so that nothing is lost: the text is there to fix by hand.
    return { attrs: { 'custom-frontmatter': match[1]! }, body, problem: `front matter is not valid YAML (${firstLine(error)}); kept as the attribute custom-frontmatter` };
  }
  if (value === null || value === undefined) return { attrs: {}, body };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { attrs: { 'custom-frontmatter': match[1]! }, body, problem: 'front matter is not a map of properties; kept as the attribute custom-frontmatter' };
  }
  const attrs: Record<string, string> = {};
  const renamed: Record<string, string> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const name = attrName(key, attrs);
    if (name.slice('custom-'.length) !== key) renamed[name] = key;
    attrs[name] = encodeValue(item);
  }
  if (Object.keys(renamed).length > 0) attrs[KEYS_ATTR] = JSON.stringify(renamed);
  return { attrs, body };
}

/** The front matter block for a document's `custom-*` attributes, or '' when it has none. */
export function writeFrontMatter(attrs: Record<string, string>): string {
  if (attrs['custom-frontmatter'] !== undefined && Object.keys(attrs).every((key) => !key.startsWith('custom-') || key === 'custom-frontmatter')) {
    return `---\n${attrs['custom-frontmatter']}\n---\n`;
  }
  const renamed = parseKeys(attrs[KEYS_ATTR]);
  // A map, not an object: a property named `__proto__` set on an object changed its prototype and was lost.
  const properties = new Map<string, unknown>();
  for (const [name, value] of Object.entries(attrs).sort(([a], [b]) => a.localeCompare(b))) {
    if (!name.startsWith('custom-') || name === KEYS_ATTR || name === 'custom-frontmatter') continue;
    // A key kept in custom-frontmatter-keys as anything but text (edited by hand) is not taken: the attribute's own name is.
    const kept = Object.hasOwn(renamed, name) ? (renamed as Record<string, unknown>)[name] : undefined;
    properties.set(typeof kept === 'string' ? kept : name.slice('custom-'.length), decodeValue(value));
  }
  if (properties.size === 0) return '';
  return `---\n${stringify(properties, { lineWidth: 0, customTags: (tags) => [WRITE_AS_SPELT, ...tags] }).trimEnd()}\n---\n`;
}

/**
 * A number as the front matter spells it. Read as a JavaScript number, `1.10` became `1.1`, a 20-digit
 * id was rounded, `01234` (a postcode) lost its zero and `.inf` became null.
 */
class NumberText {
  constructor(readonly source: string) {}

  /** As a map's key (`2024: done`), the number as written. */
  toString(): string {
    return this.source;
  }
}

/** A number as JSON spells it, which YAML's core schema reads as the same number. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NUMBER_TAGS = new Set(['tag:yaml.org,2002:int', 'tag:yaml.org,2002:float']);

/** Reading: YAML's number tags give the text they matched. */
function numbersAsSpelt(tags: Tags): Tags {
  return tags.map((tag) => typeof tag === 'object' && NUMBER_TAGS.has(tag.tag) && 'resolve' in tag
    ? { ...tag, resolve: (source: string) => new NumberText(source) } as ScalarTag
    : tag);
}

/** Writing: a number goes out as it came in. */
const WRITE_AS_SPELT: ScalarTag = {
  tag: 'tag:yaml.org,2002:float',
  default: true,
  identify: (value) => value instanceof NumberText,
  resolve: (source) => new NumberText(source),
  stringify: (item) => (item.value as NumberText).source,
};

function encodeValue(value: unknown): string {
  if (typeof value === 'string') return looksLikeJson(value) ? JSON.stringify(value) : value;
  if (value instanceof NumberText) return JSON_NUMBER.test(value.source) ? value.source : encodeValue(value.source);
  if (value instanceof Date) return JSON.stringify(value.toISOString().slice(0, value.getUTCHours() || value.getUTCMinutes() ? 19 : 10));
  return jsonText(value);
}

/** JSON.stringify, with numbers as spelt (one JSON cannot spell as its string). */
function jsonText(value: unknown): string {
  if (value instanceof NumberText) return JSON_NUMBER.test(value.source) ? value.source : JSON.stringify(value.source);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value);
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(',')}}`;
  return JSON.stringify(value ?? null);
}

function decodeValue(value: string): unknown {
  if (JSON_NUMBER.test(value)) return new NumberText(value);
  if (!looksLikeJson(value)) return value;
  return parseKeepingNumbers(value);
}

/**
 * JSON.parse, but each number as its text: every number outside the strings is read as a string
 * marked by a NUL first, then made a NumberText. A text whose strings could hold that mark (it
 * holds an escaped NUL) is parsed as it is.
 */
function parseKeepingNumbers(text: string): unknown {
  if (/\\u0000/i.test(text)) return JSON.parse(text);
  let marked = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      // Past the string, its escapes with it.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (char !== '-' && (char < '0' || char > '9')) continue;
    NUMBER_TOKEN.lastIndex = i;
    const token = NUMBER_TOKEN.exec(text)?.[0];
    if (!token) continue;
    marked += `${text.slice(from, i)}"\\u0000${token}"`;
    i += token.length - 1;
    from = i + 1;
  }
  return unmark(JSON.parse(marked + text.slice(from)));
}

const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function unmark(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith('\u0000') ? new NumberText(value.slice(1)) : value;
  if (Array.isArray(value)) return value.map(unmark);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, unmark(item)]));
  return value;
}

function looksLikeJson(value: string): boolean {
  if (value === '') return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

function attrName(key: string, taken: Record<string, string>): string {
  let base = key.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 50) || 'property';
  if (base === 'frontmatter-keys' || base === 'frontmatter') base = `${base}-1`;
  let name = `custom-${base}`;
  for (let n = 2; taken[name] !== undefined; n++) name = `custom-${base}-${n}`;
  return name;
}

function parseKeys(value: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    return parsed !== null && typeof parsed === 'object' ? parsed as Record<string, string> : {};
  } catch {
    return {};
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
}
