import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KernelConfigFile } from '../../core/config/kernel-config.js';
import type { Kernel } from '../../core/kernel.js';
import { REPO_ROOT } from './harness.js';
import { rawRequest, type RawResponse } from './http-client.js';

/**
 * The built kernel (dist/), loaded in this process and served over loopback HTTP: only compiled do the
 * plugins have their worker threads' scripts beside them (the TypeScript sources under the test runner
 * run that work on this thread), and only in this process can the event loop's stalls be measured.
 */
const BUILT = join(REPO_ROOT, 'dist');
const ADMIN = 'qk_built-kernel-admin-token';

type KernelModule = typeof import('../../core/kernel.js');
type ServeModule = typeof import('../../core/http/serve.js');
type LogModule = typeof import('../../core/log.js');

async function builtModule<T>(...path: string[]): Promise<T> {
  const file = join(BUILT, ...path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build`);
  return await import(pathToFileURL(file).href) as T;
}

export interface BuiltKernel {
  kernel: Kernel;
  url: string;
  /** POSTs `input` to /api/actions/<path> (e.g. `blocks/notebook/create`) as an administrator. */
  call(path: string, input: Record<string, unknown>): Promise<RawResponse>;
}

/**
 * Boots the built kernel in `workspace` with `config` (its `plugins` merged over the blocks plugin's
 * watch and welcome turned off) and serves it; `closers` receives how to stop both, the server first.
 */
export async function serveBuiltKernel(workspace: string, config: KernelConfigFile, closers: (() => Promise<void>)[]): Promise<BuiltKernel> {
  const { Kernel: BuiltKernelClass } = await builtModule<KernelModule>('core', 'kernel.js');
  const { startHttpServer } = await builtModule<ServeModule>('core', 'http', 'serve.js');
  const { silentLogger } = await builtModule<LogModule>('core', 'log.js');
  const kernel = await BuiltKernelClass.boot({
    workspace,
    logger: silentLogger,
    config: {
      ...config,
      auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] },
      plugins: { blocks: { config: { watch: false, welcome: false } }, ...config.plugins },
    },
  });
  closers.push(() => kernel.close());
  const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
  closers.push(() => server.close());
  const call = (path: string, input: Record<string, unknown>): Promise<RawResponse> => rawRequest(`${server.url}/api/actions/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify(input),
  });
  return { kernel, url: server.url, call };
}
