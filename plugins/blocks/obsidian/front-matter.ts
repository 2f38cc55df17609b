import { parse, stringify } from 'yaml';

/**
 * Obsidian's YAML front matter (its "properties") as document attributes and back. Each key becomes
 * `custom-<key>`: a string as itself, any other value (a list, a number, a date, true) as its JSON, and
 * a string that would read back as JSON (`"123"`, `"true"`) as a JSON string, so that every value
 * returns with its type. Keys that are not valid attribute names (spaces, accents, over 56 characters)
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

export function readFrontMatter(text: string): FrontMatter {
  const match = FRONT_MATTER.exec(text);
  if (!match) return { attrs: {}, body: text };
  const body = text.slice(match[0].length);
  let value: unknown;
  try {
    value = parse(match[1]!, { maxAliasCount: 100 });
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
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attrs).sort(([a], [b]) => a.localeCompare(b))) {
    if (!name.startsWith('custom-') || name === KEYS_ATTR || name === 'custom-frontmatter') continue;
    properties[renamed[name] ?? name.slice('custom-'.length)] = decodeValue(value);
  }
  if (Object.keys(properties).length === 0) return '';
  return `---\n${stringify(properties, { lineWidth: 0 }).trimEnd()}\n---\n`;
}

function encodeValue(value: unknown): string {
  if (typeof value === 'string') return looksLikeJson(value) ? JSON.stringify(value) : value;
  if (value instanceof Date) return JSON.stringify(value.toISOString().slice(0, value.getUTCHours() || value.getUTCMinutes() ? 19 : 10));
  return JSON.stringify(value ?? null);
}

function decodeValue(value: string): unknown {
  if (!looksLikeJson(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
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
