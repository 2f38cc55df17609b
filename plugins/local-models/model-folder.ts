import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { KernelError } from '../../core/errors.js';
import { DTYPE_FILE_SUFFIX, type ModelDtype } from './config.js';

/**
 * `org/name` as on the Hub: two segments of letters, digits, `.`, `_`, `-`, each starting with a letter
 * or digit (so no `.`/`..` segment, no hidden folder), no `..` anywhere, no absolute path: the folder it
 * names always lies inside `<workspace>/models`.
 */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;

export function isValidModelId(id: string): boolean {
  return MODEL_ID.test(id) && !id.includes('..');
}

/** The folder of a model; refuses an id that is not `org/name` (it would be a path of its own). */
export function modelFolder(modelsDir: string, id: string): string {
  if (!isValidModelId(id)) {
    throw new KernelError('INVALID_INPUT', `'${id}' is not a model id: expected 'org/name' as on the Hugging Face Hub (letters, digits, '.', '_', '-')`, { details: { model: id } });
  }
  const root = resolve(modelsDir);
  const folder = resolve(root, id);
  // Belt and braces: the pattern already keeps the folder inside the models folder.
  if (relative(root, folder).startsWith('..') || !folder.startsWith(root + sep)) throw new KernelError('INVALID_INPUT', `model id '${id}' leaves the models folder`);
  return folder;
}

/** The files transformers.js reads for a BERT-like model with this dtype, relative to the model folder. */
export function modelFiles(dtype: ModelDtype = 'fp32'): string[] {
  return ['config.json', 'tokenizer_config.json', 'tokenizer.json', `onnx/model${DTYPE_FILE_SUFFIX.get(dtype) ?? ''}.onnx`];
}

export function missingModelError(id: string, folder: string, missing: readonly string[]): KernelError {
  return new KernelError('MODEL_UNAVAILABLE',
    `model '${id}' is not in ${folder} (missing ${missing.join(', ')}): download it with 'quire models pull ${id}', or copy its folder there`,
    { details: { model: id, folder, missing: [...missing] } });
}

/** Throws the clear error when a file the load needs is not there (before starting anything heavy). */
export function checkModelFolder(modelsDir: string, id: string, dtype?: ModelDtype): string {
  const folder = modelFolder(modelsDir, id);
  const missing = modelFiles(dtype).filter((file) => !existsSync(join(folder, file)));
  if (missing.length > 0) throw missingModelError(id, folder, missing);
  return folder;
}

/** What config.json says of the model's outputs, read without loading it; undefined where it says nothing. */
export interface ModelShape {
  hiddenSize: number | undefined;
  labels: number | undefined;
}

export function readModelShape(folder: string): ModelShape {
  try {
    const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
    const hidden = config.hidden_size ?? config.d_model ?? config.dim;
    const labels = config.id2label && typeof config.id2label === 'object' ? Object.keys(config.id2label).length : config.num_labels;
    return {
      hiddenSize: typeof hidden === 'number' && Number.isInteger(hidden) && hidden > 0 ? hidden : undefined,
      labels: typeof labels === 'number' && labels > 0 ? labels : undefined,
    };
  } catch {
    return { hiddenSize: undefined, labels: undefined };
  }
}
