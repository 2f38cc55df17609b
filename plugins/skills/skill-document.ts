import { isMap, parseDocument } from 'yaml';
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, skillError } from './skill-limits.js';

/** A SKILL.md read and checked: the two fields the kernel uses, the rest of the front matter as written, and the body. */
export interface SkillDocument {
  name: string;
  description: string;
  /** Every front-matter field (allowed-tools, license, metadata… kept as the author wrote them; none of them grants anything here). */
  frontMatter: Record<string, unknown>;
  body: string;
}

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Reads a SKILL.md in the format agent tools share (Claude Code, the Agent Skills spec): `---` YAML
 * front matter `---`, then Markdown. `folder` is the folder's name when the name must equal it.
 * Throws a skill error naming exactly what is wrong.
 */
export function parseSkillDocument(text: string, options: { folder?: string; maxBodyChars: number; path: string }): SkillDocument {
  const { path } = options;
  const source = text.replace(/^\uFEFF/, '');
  if (source.includes('\u0000')) throw skillError('NOT_TEXT', `${path} is not text (it holds NUL bytes)`, { path });
  const lines = source.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    throw skillError('FRONT_MATTER_MISSING', `${path} has no front matter: it must start with a line '---', then YAML with name and description, then '---'`, { path });
  }
  const end = lines.findIndex((line, index) => index > 0 && (line.trimEnd() === '---' || line.trimEnd() === '...'));
  if (end < 0) throw skillError('FRONT_MATTER_UNCLOSED', `${path}: the front matter opened on line 1 is never closed by a line '---'`, { path });
  const yaml = parseDocument(lines.slice(1, end).join('\n'), { uniqueKeys: true, prettyErrors: true });
  if (yaml.errors.length > 0) {
    const first = yaml.errors[0]!;
    // The YAML starts on line 2 of the file.
    const line = first.linePos?.[0] ? first.linePos[0].line + 1 : undefined;
    throw skillError('YAML_INVALID', `${path}: the front matter is not valid YAML${line ? ` (line ${line})` : ''}: ${first.message.split('\n')[0]}`, { path, ...(line ? { line } : {}) });
  }
  if (!isMap(yaml.contents)) throw skillError('FRONT_MATTER_NOT_MAPPING', `${path}: the front matter must be a YAML mapping of fields (name: …, description: …)`, { path });
  let frontMatter: Record<string, unknown>;
  try {
    frontMatter = yaml.toJS({ maxAliasCount: 50 }) as Record<string, unknown>;
  } catch (error) {
    // Aliases that expand past the bound ("a billion laughs") were a plugin error (500) naming nobody.
    throw skillError('YAML_INVALID', `${path}: the front matter is not usable YAML: ${(error as Error).message.split('\n')[0]}`, { path });
  }
  const name = checkName(frontMatter.name, path, 'name' in frontMatter);
  if (options.folder !== undefined && name !== options.folder) {
    throw skillError('NAME_FOLDER_MISMATCH', `${path}: the name '${name}' differs from its folder '${options.folder}'; a skill's folder must be named as the skill`, { path, name, folder: options.folder });
  }
  const description = checkDescription(frontMatter.description, path, 'description' in frontMatter);
  const body = lines.slice(end + 1).join('\n').replace(/^\n+/, '');
  if (body.length > options.maxBodyChars) {
    throw skillError('BODY_TOO_LARGE', `${path}: the instructions are ${body.length} characters, more than the ${options.maxBodyChars} allowed; move details into files beside SKILL.md and point to them`, { path, chars: body.length, limit: options.maxBodyChars });
  }
  return { name, description, frontMatter, body };
}

/** Why a name is refused, in words: the first rule it breaks. */
export function checkName(value: unknown, path: string, present = true): string {
  if (!present || value === null || value === undefined) throw skillError('NAME_MISSING', `${path}: the front matter has no name`, { path });
  if (typeof value !== 'string') throw skillError('NAME_INVALID', `${path}: the name must be text, not ${Array.isArray(value) ? 'a list' : typeof value}`, { path });
  const reason = nameFlaw(value);
  if (reason) throw skillError('NAME_INVALID', `${path}: the name '${value.slice(0, 80)}' ${reason}`, { path, name: value.slice(0, 200) });
  return value;
}

export function nameFlaw(value: string): string | undefined {
  if (value.length === 0) return 'is empty';
  if (value.length > MAX_NAME_LENGTH) return `is ${value.length} characters long, more than ${MAX_NAME_LENGTH}`;
  if (/\s/.test(value)) return 'contains spaces; use lowercase letters, digits and hyphens (my-skill)';
  if (/[A-Z]/.test(value)) return 'contains uppercase letters; use lowercase letters, digits and hyphens';
  if (!/^[a-z0-9-]+$/.test(value)) return 'contains characters other than lowercase letters, digits and hyphens';
  if (!NAME.test(value)) return 'starts or ends with a hyphen, or has two in a row';
  return undefined;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

function checkDescription(value: unknown, path: string, present: boolean): string {
  if (!present || value === null || value === undefined) throw skillError('DESCRIPTION_MISSING', `${path}: the front matter has no description (say what the skill does and when to use it)`, { path });
  if (typeof value !== 'string') throw skillError('DESCRIPTION_INVALID', `${path}: the description must be text, not ${Array.isArray(value) ? 'a list' : typeof value}`, { path });
  if (value.trim() === '') throw skillError('DESCRIPTION_EMPTY', `${path}: the description is empty`, { path });
  // It is shown in every turn's prompt and at the terminal: an escape sequence or a direction override
  // there could disguise what follows it, so each is shown as U+FFFD (the file keeps what it holds; a
  // skill is not broken for it). The marks of mixed right-to-left text (U+200E, U+200F) stay.
  // Its length is judged too (a control character before the 1,024th let any length through).
  const shown = value.replace(CONTROLS, '\ufffd');
  if (value.length > MAX_DESCRIPTION_LENGTH) {
    throw skillError('DESCRIPTION_TOO_LONG', `${path}: the description is ${value.length} characters, more than ${MAX_DESCRIPTION_LENGTH}`, { path, chars: value.length, limit: MAX_DESCRIPTION_LENGTH });
  }
  return shown;
}

/** The SKILL.md text with its front matter's name changed, comments and the other fields kept as written. */
export function renamedSkillText(text: string, newName: string): string {
  const source = text.replace(/^\uFEFF/, '');
  const newline = source.includes('\r\n') ? '\r\n' : '\n';
  const lines = source.split(/\r?\n/);
  const end = lines.findIndex((line, index) => index > 0 && (line.trimEnd() === '---' || line.trimEnd() === '...'));
  const yaml = parseDocument(lines.slice(1, end).join('\n'));
  yaml.set('name', newName);
  return ['---', String(yaml).replace(/\n$/, ''), ...lines.slice(end)].join(newline);
}
