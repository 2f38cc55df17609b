/**
 * Child process of the HTTP benchmark: serves the kernel (with the bench plugin) and, on another port,
 * a bare Hono app whose one route returns the same JSON. Prints both URLs and the token as one JSON line.
 */
import { createHash, randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { startHttpServer } from '../core/http/serve.js';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import { NOOP_RESULT, createBenchWorkspace } from './bench-workspace.js';

const token = `qk_${randomBytes(32).toString('base64url')}`;
const workspace = await createBenchWorkspace();
const config = {
  ...workspace.config,
  auth: { tokens: [{ name: 'bench', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] },
} as KernelConfigFile;
const kernel = await Kernel.boot({ workspace: workspace.root, config, logger: silentLogger });
const kernelServer = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });

const bare = new Hono();
bare.post('/bare', (c) => c.json({ result: NOOP_RESULT }));
// A second reference: the same bare route, but reading and parsing the JSON body as any real endpoint must.
bare.post('/bare-body', async (c) => {
  await c.req.json();
  return c.json({ result: NOOP_RESULT });
});
const bareUrl = await new Promise<string>((resolve) => {
  serve({ fetch: bare.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}/bare`));
});

process.stdout.write(`${JSON.stringify({ pipelineUrl: `${kernelServer.url}/api/actions/bench/bench/noop`, bareUrl, bareBodyUrl: `${bareUrl}-body`, token, workspace: workspace.root })}\n`);
process.on('SIGTERM', () => process.exit(0));
