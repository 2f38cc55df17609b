import { Hono } from 'hono';
import type { Kernel } from '../kernel.js';
import { KernelError } from '../errors.js';
import { KERNEL_VERSION } from '../paths.js';
import { errorResponse } from './error-response.js';
import type { HttpEnv } from './http-env.js';
import { requestGuard } from './middleware/request-guard.js';
import { requireRole } from './middleware/require-role.js';
import { apiDocsRoutes } from './routes/api-docs.js';
import { auditRoutes } from './routes/audit.js';
import { webAppRoutes } from './routes/web-app.js';
import { actionRoutes } from './routes/actions.js';
import { confirmationRoutes } from './routes/confirmations.js';
import { gateRoutes } from './routes/gate.js';
import { usageRoutes } from './routes/usage.js';
import { grantRoutes } from './routes/grants.js';
import { jobRoutes } from './routes/jobs.js';
import { pluginRoutes } from './routes/plugins.js';
import { sessionRoutes } from './routes/sessions.js';
import { mcpRoutes } from './routes/mcp.js';
import { mcpServerRoutes } from './routes/mcp-servers.js';

/**
 * The kernel's HTTP surface. One guard runs before anything else: Host/Origin, the body limit before a
 * body is read, the bearer token before any `/api` route and `/mcp`.
 */
export function createHttpApp(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const { server } = kernel.config;
  app.onError((error, c) => errorResponse(c, error, kernel.log));
  app.notFound((c) => errorResponse(c, new KernelError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));
  app.use('*', requestGuard({ allowedHosts: server.allowedHosts, allowedOrigins: server.allowedOrigins, bodyLimitBytes: server.bodyLimitBytes, authenticator: kernel.authenticator }));
  app.get('/healthz', (c) => {
    // A local client's challenge (serve-address.ts) is answered with proof of this boot's secret; bounded, plain text only.
    const challenge = c.req.query('challenge');
    const proof = challenge !== undefined && /^[A-Za-z0-9_-]{16,128}$/.test(challenge) ? { proof: kernel.proveInstance(challenge) } : {};
    return c.json({ ok: true, version: KERNEL_VERSION, instance: kernel.instance, ...proof });
  });
  app.route('/', webAppRoutes(kernel));
  app.route('/api', apiDocsRoutes(kernel));
  // Who the token is: its name and role, so that a client (the web app) shows what that role may do.
  app.get('/api/me', (c) => {
    const { kind, name, role } = c.get('principal');
    return c.json({ kind, name, role });
  });
  app.route('/api/plugins', pluginRoutes(kernel));
  app.route('/api/actions', actionRoutes(() => kernel.pipeline, () => kernel.jobs));
  app.use('/api/usage', requireRole('admin'));
  app.route('/api/usage', usageRoutes(kernel));
  app.use('/api/gate', requireRole('admin'));
  app.route('/api/gate', gateRoutes(kernel));
  app.use('/api/audit/*', requireRole('admin'));
  app.use('/api/audit', requireRole('admin'));
  app.route('/api/audit', auditRoutes(kernel));
  app.use('/api/grants/*', requireRole('admin'));
  app.use('/api/grants', requireRole('admin'));
  app.route('/api/grants', grantRoutes(kernel));
  app.use('/api/confirmations/*', requireRole('admin'));
  app.use('/api/confirmations', requireRole('admin'));
  app.route('/api/confirmations', confirmationRoutes(kernel));
  app.use('/api/jobs/*', requireRole('admin'));
  app.use('/api/jobs', requireRole('admin'));
  app.route('/api/jobs', jobRoutes(() => kernel.jobs));
  app.use('/api/agent/sessions/*', requireRole('admin'));
  app.use('/api/agent/sessions', requireRole('admin'));
  app.route('/api/agent/sessions', sessionRoutes(kernel));
  app.use('/api/mcp/*', requireRole('admin'));
  app.use('/api/mcp', requireRole('admin'));
  app.route('/api/mcp/servers', mcpServerRoutes(kernel));
  // MCP for outside agents: administrators only, behind the same Host/Origin guard and body limit.
  app.use('/mcp', requireRole('admin'));
  app.route('/mcp', mcpRoutes(kernel));
  return app;
}
