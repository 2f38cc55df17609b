import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { KernelError, isKernelError, linkOrCopyExclusive } from '../../core/index.js';
import type { ModelDtype } from './config.js';
import { checkModelFolder, modelFiles, modelFolder } from './model-folder.js';
import { withTransformersEnv } from './transformers-env.js';

export const DEFAULT_REMOTE_HOST = 'https://huggingface.co/';

export interface PullOptions {
  modelsDir: string;
  /** `org/name`. */
  model: string;
  /** Serves `<host>/<org>/<name>/resolve/main/<file>` as the Hub does; default the Hub. */
  remoteHost?: string;
  dtype?: ModelDtype;
  /** Download again over a model already there. */
  force?: boolean;
  onProgress?(progress: PullProgress): void;
}

export interface PullProgress {
  file: string;
  loaded: number;
  total: number;
  done: boolean;
}

export interface PullResult {
  folder: string;
  /** False when the model was there already (and `force` was not given): nothing was downloaded. */
  downloaded: boolean;
  files: { path: string; bytes: number }[];
}

/**
 * Downloads a model with transformers.js' own remote loading (so its files are exactly those a later
 * offline load reads, in the same layout) into a staging folder beside the models, and moves it into
 * place only once every file is there: a failed or interrupted pull leaves nothing a load would take
 * for a model. Loading the model at the end also proves the ONNX file opens.
 */
export async function pullModel(options: PullOptions): Promise<PullResult> {
  const folder = modelFolder(options.modelsDir, options.model);
  await restoreInterruptedSwap(folder);
  const wanted = modelFiles(options.dtype);
  if (!options.force && wanted.every((file) => existsSync(join(folder, file)))) return { folder, downloaded: false, files: await sizes(folder, wanted) };
  const host = options.remoteHost ?? DEFAULT_REMOTE_HOST;
  checkHost(host);
  await removeAbandonedPulls(options.modelsDir);
  const staging = join(options.modelsDir, `.pull-${randomUUID()}`);
  await mkdir(staging, { recursive: true });
  try {
    await download(options, staging, host);
    checkModelFolder(staging, options.model, options.dtype);
    await moveIntoPlace(join(staging, options.model), folder);
    return { folder, downloaded: true, files: await sizes(folder, wanted) };
  } catch (error) {
    throw pullError(error, options.model, host);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function download(options: PullOptions, staging: string, host: string): Promise<void> {
  await withTransformersEnv({ modelsDir: staging, remoteHost: host }, async ({ AutoConfig, AutoTokenizer, AutoModel }) => {
    const progress_callback = (info: { status: string; file?: string; loaded?: number; total?: number }): void => {
      if ((info.status === 'progress' || info.status === 'done') && info.file) {
        options.onProgress?.({ file: info.file, loaded: info.loaded ?? info.total ?? 0, total: info.total ?? 0, done: info.status === 'done' });
      }
    };
    await AutoConfig.from_pretrained(options.model, { progress_callback });
    await AutoTokenizer.from_pretrained(options.model, { progress_callback });
    const model = await AutoModel.from_pretrained(options.model, { dtype: options.dtype ?? 'fp32', progress_callback });
    await model.dispose();
  });
}

/** A pull stopped by Ctrl-C or a crash leaves its staging folder: gone a day later (another pull may be running now). */
async function removeAbandonedPulls(modelsDir: string): Promise<void> {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  for (const name of await entries(modelsDir)) {
    if (!name.startsWith('.pull-')) continue;
    const folder = join(modelsDir, name);
    const changed = await stat(folder).then((info) => info.mtimeMs, () => Date.now());
    if (changed < dayAgo) await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Replaces an older copy only after the new one is complete; the old one is removed last. What the old
 * folder holds that the download does not (the weights of another dtype pulled before, files copied in
 * by hand) is kept: linked into the new folder first (a pull of q8 after fp32 removed the fp32 weights
 * the configured embedder loads). A failed swap puts the old folder back.
 */
async function moveIntoPlace(downloaded: string, folder: string): Promise<void> {
  await mkdir(dirname(folder), { recursive: true });
  const old = `${folder}${OLD_MARK}${randomUUID()}`;
  const hadOld = existsSync(folder);
  if (hadOld) {
    await keepOthers(folder, downloaded);
    await rename(folder, old);
  }
  try {
    await rename(downloaded, folder);
  } catch (error) {
    if (hadOld) await rename(old, folder).catch(() => undefined);
    throw error;
  }
  if (hadOld) await rm(old, { recursive: true, force: true });
}

const OLD_MARK = '.old-';

/** Links every file of `from` that `into` lacks into it (the same file system: no copy of the bytes). */
async function keepOthers(from: string, into: string): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(into, entry.name);
    if (entry.isDirectory()) {
      await mkdir(target, { recursive: true });
      await keepOthers(source, target);
    } else if (entry.isFile() && !existsSync(target)) {
      // Linked: no copy of the bytes (a copy where the file system has no hard links).
      await linkOrCopyExclusive(source, target);
    }
  }
}

/** A pull killed between its two renames left the model under its old name: put back before anything else. */
async function restoreInterruptedSwap(folder: string): Promise<void> {
  if (existsSync(folder)) return;
  // Exactly `<name>.old-<uuid>`: `org/bge.old-v2` may be another model.
  const mine = new RegExp(`^${basename(folder).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${OLD_MARK.replace('.', '\\.')}[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`);
  const left = (await entries(dirname(folder))).find((name) => mine.test(name));
  if (left) await rename(join(dirname(folder), left), folder).catch(() => undefined);
}

async function sizes(folder: string, files: readonly string[]): Promise<{ path: string; bytes: number }[]> {
  return Promise.all(files.map(async (path) => ({ path, bytes: (await stat(join(folder, path))).size })));
}

/**
 * Weights go into onnxruntime's native parser, and nothing signs them: they come over https, or plain
 * http from this machine only (a mirror on loopback, the tests' fake). Over http from elsewhere, anyone
 * on the path could swap them.
 */
/** A host as it may be said: never a user name or password it holds, a URL or not (cut to 200 characters). */
export function hostWithoutCredentials(host: string): string {
  try {
    const url = new URL(host);
    if (url.username === '' && url.password === '') return host.slice(0, 200);
    url.username = '';
    url.password = '';
    return url.href.slice(0, 200);
  } catch {
    return host.slice(0, 200).replace(/\/\/[^/]*@/, '//***@');
  }
}

function checkHost(host: string): void {
  let url: URL;
  try {
    url = new URL(host);
  } catch {
    throw new KernelError('INVALID_INPUT', `remoteHost '${hostWithoutCredentials(host)}' is not a URL`, { details: { field: 'remoteHost' } });
  }
  // Refused without being repeated: it was echoed in "pulling … from" and in fetch's own refusal.
  if (url.username !== '' || url.password !== '') {
    throw new KernelError('INVALID_INPUT', `remoteHost ${url.origin} holds a user name or password, which is not sent: give a host without them`, { details: { field: 'remoteHost' } });
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) return;
  throw new KernelError('INVALID_INPUT', `remoteHost ${url.origin} is not https: models are downloaded over https, or plain http from this machine only (the weights are not signed)`, { details: { field: 'remoteHost' } });
}

/** What went wrong, said for the person at the terminal: not found, host unreachable, or the rest. */
function pullError(error: unknown, model: string, host: string): KernelError {
  if (isKernelError(error) && error.code !== 'MODEL_UNAVAILABLE') return error;
  const message = describe(error);
  // The Hub answers 401 for a repository that does not exist as for one that needs a token.
  if (/\b40[134]\b|not found|could not locate|unauthorized access|forbidden/i.test(message)) {
    return new KernelError('NOT_FOUND', `model '${model}' was not found at ${host} (${message}); check the id (org/name). A gated or private model on huggingface.co needs HF_TOKEN set to an access token; or copy its folder into <workspace>/models/${model}/`, { details: { model, host } });
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT/.test(message)) {
    return new KernelError('MODEL_UNAVAILABLE', `could not reach ${host} to download '${model}': ${message}`, { details: { model, host } });
  }
  return new KernelError('MODEL_UNAVAILABLE', `downloading '${model}' from ${host} failed: ${message}`, { details: { model, host } });
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

export interface LocalModel {
  id: string;
  /** The ONNX files present, e.g. onnx/model.onnx, onnx/model_quantized.onnx. */
  weights: string[];
  bytes: number;
}

/** The model folders under `<workspace>/models/` that hold a config.json (staging folders left out). */
export async function listModels(modelsDir: string): Promise<LocalModel[]> {
  const models: LocalModel[] = [];
  for (const org of await entries(modelsDir)) {
    if (org.startsWith('.')) continue;
    for (const name of await entries(join(modelsDir, org))) {
      const folder = join(modelsDir, org, name);
      if (name.includes('.old-') || !existsSync(join(folder, 'config.json'))) continue;
      const weights = (await entries(join(folder, 'onnx'))).filter((file) => file.endsWith('.onnx')).map((file) => `onnx/${file}`);
      models.push({ id: `${org}/${name}`, weights, bytes: await folderBytes(folder) });
    }
  }
  return models.sort((a, b) => a.id.localeCompare(b.id));
}

async function entries(folder: string): Promise<string[]> {
  return readdir(folder).catch(() => []);
}

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
