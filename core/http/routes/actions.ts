import { Hono, type Context } from 'hono';
import type { ActionPipeline } from '../../pipeline/action-pipeline.js';
import type { JobManager } from '../../jobs/job-manager.js';
import type { HttpEnv } from '../http-env.js';
import { readJsonBody } from '../read-body.js';
import { errorResponse } from '../error-response.js';

/**
 * `POST /api/actions/:plugin/:tool/:action`: a person or program calling an action. The caller is the
 * person, so there is no confirmation; input is validated, the role checked and effects audited.
 * A call runs to its end or its time limit even if the client goes away: stopping a write halfway
 * because a connection dropped would help no one, and watching every connection cost a third of the
 * throughput of a small call. A long action (an import, a rebuild) answers 202 with its job at once;
 * `GET /api/jobs/{id}` and its event stream follow it, `POST /api/jobs/{id}/cancel` stops it.
 */
export function actionRoutes(pipeline: () => ActionPipeline, jobs: () => JobManager): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  // Chained rather than async/await: this is the path of every call, and each promise costs.
  app.post('/:plugin/:tool/:action', (c) => readJsonBody(c).then((input) => pipeline().call({
    target: { plugin: c.req.param('plugin'), tool: c.req.param('tool'), action: c.req.param('action') },
    input,
    principal: c.get('principal'),
    ownsInput: true,
    background: true,
  })).then((outcome) => {
    if (outcome.status === 'job') return answerJob(c, outcome.job.id, outcome.done, jobs);
    // Only agent calls can stop at a confirmation; a person's call always runs or fails.
    // A handler that returned nothing answers `result: null` (the field was left out: `{}`).
    return c.json({ result: outcome.status === 'ok' ? outcome.value ?? null : null });
  }));
  return app;
}

/** A long action's answer: its job at once (202), or its result if it ends within `Prefer: wait`. */
async function answerJob(c: Context<HttpEnv>, jobId: string, done: Promise<unknown>, jobs: () => JobManager): Promise<Response> {
  // `Prefer: wait=<seconds>` (RFC 7240): a job that ends within that answers like any call.
  const waitMs = preferredWaitMs(c.req.header('prefer'));
  const location = `/api/jobs/${jobId}`;
  if (waitMs > 0 && await settlesWithin(done, waitMs)) {
    try {
      return c.json({ result: (await done) ?? null, job: jobs().get(jobId) });
    } catch (error) {
      // Failed like any call, and the job's record stays where the header says.
      return errorResponse(c, error, undefined, { location });
    }
  }
  c.header('Location', location);
  return c.json({ job: jobs().get(jobId) }, 202);
}

/** The longest a client may ask a call to wait for its job (RFC 7240 `wait`, in seconds). */
const MAX_WAIT_MS = 600_000;

function preferredWaitMs(header: string | undefined): number {
  const match = /(?:^|[,;\s])wait\s*=\s*(\d+)/i.exec(header ?? '');
  return match ? Math.min(Number(match[1]) * 1000, MAX_WAIT_MS) : 0;
}

/** Whether `work` settles (either way) within `ms`. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  return Promise.race([work.then(() => true, () => true), timeout]).finally(() => clearTimeout(timer));
}
