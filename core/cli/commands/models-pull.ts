import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DTYPE_FILE_SUFFIX, type ModelDtype } from '../../../plugins/local-models/config.js';
import { DEFAULT_REMOTE_HOST, hostWithoutCredentials, listModels, pullModel } from '../../../plugins/local-models/model-pull.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { assertWorkspaceExists, describeError } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';
import { progressBar } from '../progress-bar.js';

const WORKSPACE_OPTION = '  -w, --workspace <dir>   workspace folder (default: ./workspace)';

/** `plugins.local-models.config.remoteHost` of quire.json, if the file says one; the kernel is not started. */
async function configuredHost(root: string): Promise<string | undefined> {
  try {
    const config = JSON.parse(await readFile(join(root, 'quire.json'), 'utf8')) as { plugins?: Record<string, { config?: { remoteHost?: unknown } }> };
    const host = config.plugins?.['local-models']?.config?.remoteHost;
    return typeof host === 'string' ? host : undefined;
  } catch {
    return undefined;
  }
}

const megabytes = (bytes: number): string => `${(bytes / 1_000_000).toFixed(1)} MB`;

/** One bar per file, the bytes of it downloaded so far. */
function fileProgress(io: CliIO): (update: { file: string; loaded: number; total: number; done: boolean }) => void {
  let current: { file: string; bar: ReturnType<typeof progressBar> } | undefined;
  return (update) => {
    if (current?.file !== update.file) {
      current?.bar.end();
      current = { file: update.file, bar: progressBar(io) };
    }
    current.bar.update({ done: update.loaded, ...(update.total ? { total: update.total } : {}), message: update.file });
    if (update.done) {
      current.bar.end();
      current = undefined;
    }
  };
}

export const modelsPullCommand: Command = {
  name: 'models pull',
  summary: 'download a model for the local-models plugin into <workspace>/models/',
  help: `Usage: quire models pull <org/name> [--workspace <dir>] [--remote-host <url>] [--dtype <dtype>] [--force]

Downloads a model in ONNX form (config.json, tokenizer.json, tokenizer_config.json, onnx/model*.onnx),
as published on the Hugging Face Hub (e.g. Xenova/all-MiniLM-L6-v2, Xenova/ms-marco-MiniLM-L-6-v2),
into <workspace>/models/<org>/<name>/, where the kernel loads it with no network access. The files
are moved into place only once all of them have arrived. A gated or private model on huggingface.co
needs the environment variable HF_TOKEN set to an access token.

Options:
${WORKSPACE_OPTION}
  --remote-host <url>     where to download from (default: plugins.local-models.config.remoteHost
                          in quire.json, else ${DEFAULT_REMOTE_HOST})
  --dtype <dtype>         which weights: ${[...DTYPE_FILE_SUFFIX.keys()].join(', ')} (default fp32)
  --force                 download again over a model already there`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, 'remote-host': { type: 'string' }, dtype: { type: 'string' }, force: { type: 'boolean' } }, io, 'models pull', { max: 1 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const [model, ...extra] = parsed.positionals;
    const dtype = parsed.values.dtype === undefined ? undefined : String(parsed.values.dtype);
    if (!model || extra.length > 0 || (dtype !== undefined && !DTYPE_FILE_SUFFIX.has(dtype as ModelDtype))) {
      io.err(`quire models pull: ${!model || extra.length > 0 ? 'give one model id (org/name)' : `--dtype must be one of ${[...DTYPE_FILE_SUFFIX.keys()].join(', ')}`}`);
      io.err("Run 'quire models pull --help' for usage.");
      return EXIT_USAGE;
    }
    const root = String(parsed.values.workspace ?? './workspace');
    const remoteHost = typeof parsed.values['remote-host'] === 'string' ? parsed.values['remote-host'] : await configuredHost(root) ?? DEFAULT_REMOTE_HOST;
    try {
      // A mistyped workspace got a models folder made there, as the first step of a download.
      assertWorkspaceExists(root);
      io.out(`pulling ${model} from ${hostWithoutCredentials(remoteHost)}`);
      const result = await pullModel({
        modelsDir: join(root, 'models'), model, remoteHost, force: parsed.values.force === true, onProgress: fileProgress(io),
        ...(dtype ? { dtype: dtype as ModelDtype } : {}),
      });
      const total = result.files.reduce((sum, file) => sum + file.bytes, 0);
      io.out(`${result.downloaded ? 'downloaded' : 'already there:'} ${model} (${result.files.length} files, ${megabytes(total)}) in ${result.folder}`);
      if (!result.downloaded) io.out('use --force to download it again');
      return EXIT_OK;
    } catch (error) {
      io.err(`quire models pull: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

export const modelsListCommand: Command = {
  name: 'models list',
  summary: 'list the models in <workspace>/models/',
  help: `Usage: quire models list [--workspace <dir>]

Lists the model folders under <workspace>/models/ (those holding a config.json), with their ONNX
weight files and size on disk.

Options:
${WORKSPACE_OPTION}`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' } }, io, 'models list', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const root = String(parsed.values.workspace ?? './workspace');
    try {
      assertWorkspaceExists(root);
    } catch (error) {
      io.err(`quire models list: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
    const models = await listModels(join(root, 'models'));
    if (models.length === 0) io.out("no models: download one with 'quire models pull <org/name>'");
    for (const model of models) io.out(`${model.id}  ${megabytes(model.bytes)}  ${model.weights.join(', ') || '(no onnx/*.onnx)'}`);
    return EXIT_OK;
  },
};
