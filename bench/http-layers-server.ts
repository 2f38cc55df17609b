/**
 * Child process of bench/http-layers.ts: boots the kernel with the bench plugin and serves one layer of
 * the action route's path (see there), or the kernel's own server ('full'). Prints its URL, the token
 * and the workspace as one JSON line.  node dist/bench/http-layers-server.js LAYER
 */
import { createHash, randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { startHttpServer } from '../core/http/serve.js';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import type { HttpEnv } from '../core/http/http-env.js';
import { requestGuard } from '../core/http/middleware/request-guard.js';
import { readJsonBody } from '../core/http/read-body.js';
import { NOOP_RESULT, createBenchWorkspace } from './bench-workspace.js';

const layer = process.argv[2] ?? 'full';
const token = `qk_${randomBytes(32).toString('base64url')}`;
const workspace = await createBenchWorkspace();
const config = { ...workspace.config, auth: { tokens: [{ name: 'bench', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] } } as KernelConfigFile;
const kernel = await Kernel.boot({ workspace: workspace.root, config, logger: silentLogger });
const path = '/api/actions/bench/bench/noop';
let url: string;
if (layer === 'full') {
  url = `${(await startHttpServer(kernel, { host: '127.0.0.1', port: 0 })).url}${path}`;
} else {
  const app = new Hono<HttpEnv>();
  if (layer.startsWith('guards')) {
    const { server } = kernel.config;
    app.use('*', requestGuard({ allowedHosts: server.allowedHosts, allowedOrigins: server.allowedOrigins, bodyLimitBytes: server.bodyLimitBytes, authenticator: kernel.authenticator }));
  }
  const route = '/api/actions/:plugin/:tool/:action';
  if (layer === 'bare' || layer === 'guards') app.post(route, (c) => c.json({ result: NOOP_RESULT }));
  else if (layer === 'bare-async') app.post(route, async (c) => c.json({ result: NOOP_RESULT }));
  else if (layer === 'guards+body') app.post(route, async (c) => { await readJsonBody(c); return c.json({ result: NOOP_RESULT }); });
  else if (layer === 'guards+body+pipeline') {
    app.post(route, async (c) => {
      const input = await readJsonBody(c);
      const outcome = await kernel.pipeline.call({ target: { plugin: c.req.param('plugin'), tool: c.req.param('tool'), action: c.req.param('action') }, input, principal: c.get('principal'), ownsInput: true, background: true });
      return c.json({ result: outcome.status === 'ok' ? outcome.value : null });
    });
  } else throw new Error(`unknown layer '${layer}'`);
  url = await new Promise<string>((resolve) => {
    serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}${path}`));
  });
}
process.stdout.write(`${JSON.stringify({ url, token, workspace: workspace.root })}\n`);
process.on('SIGTERM', () => { void kernel.close().finally(() => process.exit(0)); });
