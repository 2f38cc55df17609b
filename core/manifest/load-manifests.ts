import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { ManifestIssue } from '../errors.js';
import type { PluginSource } from '../plugin-api.js';
import { CODE_ROOT, NATIVE_MANIFESTS_DIR } from '../paths.js';
import { firstDuplicateKey } from './duplicate-keys.js';
import { validateManifest, type CompiledManifest } from './validate-manifest.js';

/** A manifest file as found on disk: valid (with compiled schemas and a resolved entry) or its problems. */
export type ManifestRecord =
  | { ok: true; source: PluginSource; file: string; entryPath: string; compiled: CompiledManifest }
  | { ok: false; source: PluginSource; file: string; id: string; issues: ManifestIssue[]; provides?: string[] };

export type ValidManifestRecord = Extract<ManifestRecord, { ok: true }>;

export function isValidRecord(record: ManifestRecord): record is ValidManifestRecord {
  return record.ok;
}

export interface ReadManifestOptions {
  source: PluginSource;
  expectedId?: string;
  /** The folder the entry is relative to, and must stay inside. */
  entryBase: string;
  /** The kernel's own manifests: schemas compiled on first use (see ValidateManifestOptions.trusted). */
  trusted?: boolean;
}

/** Reads, parses and validates one manifest file, and resolves its entry module. */
export async function readManifestFile(file: string, options: ReadManifestOptions): Promise<ManifestRecord> {
  const fallbackId = options.expectedId ?? basename(file, '.json');
  const fail = (issue: Omit<ManifestIssue, 'file'>, provides?: string[]): ManifestRecord => ({
    ok: false, source: options.source, file, id: fallbackId, issues: [{ ...issue, file }], ...(provides ? { provides } : {}),
  });
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return fail({ code: 'MANIFEST_INVALID', pointer: '', message: `cannot read: ${(error as Error).message}` });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail({ code: 'MANIFEST_JSON_INVALID', pointer: '', message: `not valid JSON: ${(error as Error).message}` });
  }
  const twice = firstDuplicateKey(text);
  if (twice) {
    return fail({ code: 'MANIFEST_JSON_INVALID', pointer: twice.pointer, message: `'${twice.key}' appears twice in one object: a reader of the manifest may see one and the kernel would use the other; name it once` });
  }
  const result = validateManifest(raw, { file, ...(options.expectedId !== undefined ? { expectedId: options.expectedId } : {}), trusted: options.trusted === true, ours: options.source === 'native' });
  if (!result.ok) {
    const provides = providesOf(raw);
    return { ok: false, source: options.source, file, id: idOf(raw) ?? fallbackId, issues: result.issues, ...(provides ? { provides } : {}) };
  }
  const entryPath = resolveEntry(options.entryBase, result.value.manifest.entry);
  if (entryPath === undefined) {
    return fail({ code: 'MANIFEST_ENTRY_MISSING', pointer: '/entry', message: `entry '${result.value.manifest.entry}' not found under ${options.entryBase}` }, result.value.manifest.provides);
  }
  return { ok: true, source: options.source, file, entryPath, compiled: result.value };
}

/**
 * Native entries name the built `.js`; when the kernel runs from its TypeScript sources (tests),
 * the `.ts` file beside that path is used instead.
 */
function resolveEntry(base: string, entry: string): string | undefined {
  const path = resolve(base, entry);
  const inside = relative(base, path);
  if (inside.startsWith('..') || isAbsolute(inside)) return undefined;
  if (existsSync(path)) return path;
  const typescript = path.replace(/\.m?js$/, '.ts');
  return existsSync(typescript) ? typescript : undefined;
}

function idOf(raw: unknown): string | undefined {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** What an invalid manifest says it provides, if readable: so that plugins requiring it learn why it is missing. */
function providesOf(raw: unknown): string[] | undefined {
  const provides = (raw as { provides?: unknown } | null)?.provides;
  return Array.isArray(provides) && provides.every((name) => typeof name === 'string') ? provides as string[] : undefined;
}

/**
 * Native manifests: `<dir>/<id>.json` (schemas excluded); entries resolve against the code root. Those of
 * the kernel's own folder have their schemas compiled on first use, unless `eager` (plugin validate).
 */
export async function loadNativeManifests(dir: string, codeRoot: string = CODE_ROOT, eager = false): Promise<ManifestRecord[]> {
  if (!existsSync(dir)) return [];
  const trusted = !eager && resolve(dir) === resolve(NATIVE_MANIFESTS_DIR);
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json')).sort();
  return Promise.all(names.map((name) =>
    readManifestFile(join(dir, name), { source: 'native', expectedId: basename(name, '.json'), entryBase: codeRoot, trusted })));
}

/** User plugins: `<workspace>/plugins/<id>/manifest.json`, entry beside the manifest. */
export async function loadUserManifests(pluginsDir: string): Promise<ManifestRecord[]> {
  if (!existsSync(pluginsDir)) return [];
  const records: ManifestRecord[] = [];
  for (const name of (await readdir(pluginsDir)).sort()) {
    const folder = join(pluginsDir, name);
    const file = join(folder, 'manifest.json');
    let info;
    try {
      info = await stat(folder);
    } catch (error) {
      // A dangling link or a folder that cannot be read: that plugin is refused, saying why; the others load.
      records.push({ ok: false, source: 'user', file, id: name, issues: [{ code: 'MANIFEST_INVALID', pointer: '', message: `cannot read the plugin's folder: ${(error as Error).message}`, file }] });
      continue;
    }
    if (!info.isDirectory()) continue;
    if (!existsSync(file)) continue;
    records.push(await readManifestFile(file, { source: 'user', expectedId: name, entryBase: folder }));
  }
  return records;
}

/** How `quire plugin validate` reads a path: a manifest file, a plugin folder, or a folder of manifests. */
export async function readManifestsAt(path: string): Promise<ManifestRecord[]> {
  const target = resolve(path);
  const info = await stat(target);
  if (info.isDirectory()) {
    const own = join(target, 'manifest.json');
    if (existsSync(own)) return [await readManifestFile(own, { source: 'user', expectedId: basename(target), entryBase: target })];
    const native = await loadNativeManifests(target, CODE_ROOT, true);
    return native.length > 0 ? native : loadUserManifests(target);
  }
  if (basename(target) === 'manifest.json') {
    return [await readManifestFile(target, { source: 'user', expectedId: basename(dirname(target)), entryBase: dirname(target) })];
  }
  return [await readManifestFile(target, { source: 'native', expectedId: basename(target, '.json'), entryBase: CODE_ROOT })];
}
