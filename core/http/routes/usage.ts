import { Hono } from 'hono';
import { KernelError } from '../../errors.js';
import type { Kernel } from '../../kernel.js';
import type { UsageGrouping, UsageScope } from '../../usage/usage-ledger.js';
import type { HttpEnv } from '../http-env.js';

const GROUPINGS: readonly UsageGrouping[] = ['day', 'session', 'model'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `GET /api/usage?by=day|session|model&since=YYYY-MM-DD&until=YYYY-MM-DD&session=<id>`: the usage
 * ledger's sums, priced from quire.json (cost null where a price is unknown), with the total and the
 * budgets. Admin only.
 */
export function usageRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => {
    const by = (c.req.query('by') ?? 'day') as UsageGrouping;
    if (!GROUPINGS.includes(by)) throw new KernelError('INVALID_INPUT', `by must be day, session or model, not '${by}'`, { details: { field: 'by' } });
    const scope: UsageScope = {};
    for (const [name, edge] of [['since', 'since'], ['until', 'until']] as const) {
      const value = c.req.query(name);
      if (value === undefined) continue;
      if (!DAY.test(value) || Number.isNaN(Date.parse(value))) throw new KernelError('INVALID_INPUT', `${name} must be a day as YYYY-MM-DD, not '${value}'`, { details: { field: name } });
      scope[edge] = `${value}T00:00:00.000Z`;
    }
    const session = c.req.query('session');
    if (session !== undefined) scope.sessionId = session;
    return c.json({ by, rows: kernel.usage.report(by, scope), total: kernel.usage.total(scope), budgets: kernel.config.budgets });
  });
  return app;
}
