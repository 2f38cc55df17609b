import { Hono } from 'hono';
import type { ActionPipeline } from '../../pipeline/action-pipeline.js';
import type { HttpEnv } from '../http-env.js';
import { readJsonBody } from '../read-body.js';

/**
 * `POST /api/actions/:plugin/:tool/:action`: a person or program calling an action. The caller is the
 * person, so there is no confirmation; input is validated, the role checked and effects audited.
 * A call runs to its end or its time limit even if the client goes away: stopping a write halfway
 * because a connection dropped would help no one, and watching every connection cost a third of the
 * throughput of a small call.
 */
export function actionRoutes(pipeline: () => ActionPipeline): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.post('/:plugin/:tool/:action', async (c) => {
    const input = await readJsonBody(c);
    const outcome = await pipeline().call({
      target: { plugin: c.req.param('plugin'), tool: c.req.param('tool'), action: c.req.param('action') },
      input,
      principal: c.get('principal'),
      ownsInput: true,
    });
    // Only agent calls can stop at a confirmation; a person's call always runs or fails.
    return c.json({ result: outcome.status === 'ok' ? outcome.value : null });
  });
  return app;
}
