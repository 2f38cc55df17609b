/**
 * The one place that imports @huggingface/transformers, on first use: it pulls in onnxruntime and half a
 * second of module loading that a kernel without a local model should never pay for.
 *
 * transformers.js reads its settings from one `env` object per thread. On a worker thread that is one
 * model's alone; on the main thread (tests from the sources, `quire models pull`) loads and pulls take
 * turns, so that one load's settings are never another's.
 */
type Transformers = typeof import('@huggingface/transformers');

let loading: Promise<Transformers> | undefined;
let turn: Promise<unknown> = Promise.resolve();

export function importTransformers(): Promise<Transformers> {
  loading ??= import('@huggingface/transformers');
  return loading;
}

export interface EnvSettings {
  /** `<workspace>/models` for a load; a staging folder for a pull. */
  modelsDir: string;
  /** Only `quire models pull` sets this; every other load reads the disk alone. */
  remoteHost?: string;
}

/** Runs `fn` with the settings in place and alone; puts the previous settings back afterwards. */
export function withTransformersEnv<T>(settings: EnvSettings, fn: (transformers: Transformers) => Promise<T>): Promise<T> {
  const run = turn.then(async () => {
    const transformers = await importTransformers();
    const { env } = transformers;
    const saved = { allowRemoteModels: env.allowRemoteModels, allowLocalModels: env.allowLocalModels, localModelPath: env.localModelPath, cacheDir: env.cacheDir, remoteHost: env.remoteHost };
    env.localModelPath = settings.modelsDir;
    env.cacheDir = settings.modelsDir;
    if (settings.remoteHost === undefined) {
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
    } else {
      // A pull fetches every file: nothing half-present on disk is taken instead of the remote file.
      env.allowRemoteModels = true;
      env.allowLocalModels = false;
      env.remoteHost = settings.remoteHost.endsWith('/') ? settings.remoteHost : `${settings.remoteHost}/`;
    }
    try {
      return await fn(transformers);
    } finally {
      // Loading stays off the network whatever happened: the remote settings never outlive a pull.
      Object.assign(env, saved, { allowRemoteModels: false });
    }
  });
  turn = run.catch(() => undefined);
  return run;
}
