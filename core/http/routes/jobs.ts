import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { JobManager } from '../../jobs/job-manager.js';
import { KernelError } from '../../errors.js';
import { isFinished, type JobEvent, type JobRecord } from '../../jobs/job-types.js';
import type { HttpEnv } from '../http-env.js';

const PAGE = 50;
const MAX_PAGE = 200;

/**
 * One page of `GET /api/jobs`, newest first: `state` (running, or ended), `before` (the job id to go on
 * below: `next` of the last page), `limit` (50, at most 200), `results=false` leaves each job's result
 * out (an import's may be hundreds of KB; `GET /api/jobs/{id}` has it). Every kept job's whole result
 * was answered at once before.
 */
function jobsPage(all: readonly JobRecord[], query: (name: string) => string | undefined): { jobs: JobRecord[]; next?: string } {
  const state = query('state');
  if (state !== undefined && state !== 'running' && state !== 'ended') throw refuse('state', `state must be 'running' or 'ended', not '${state.slice(0, 40)}'`);
  const limitText = query('limit');
  const limit = limitText === undefined ? PAGE : /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE)) throw refuse('limit', `limit must be a whole number from 1 to ${MAX_PAGE}, not '${String(limitText).slice(0, 40)}'`);
  const before = query('before');
  if (before !== undefined && (before === '' || before.length > 200)) throw refuse('before', 'before must be a job id (next, from the last page)');
  const results = query('results');
  if (results !== undefined && results !== 'true' && results !== 'false') throw refuse('results', `results must be 'true' or 'false', not '${results.slice(0, 40)}'`);
  const matching = all.filter((job) => (before === undefined || job.id < before)
    && (state === undefined || (state === 'running') === !isFinished(job.state)));
  const page = matching.slice(0, limit);
  return {
    jobs: results === 'false' ? page.map(({ result: _result, ...rest }) => rest) : page,
    ...(matching.length > limit ? { next: page.at(-1)!.id } : {}),
  };
}

const refuse = (field: string, message: string): KernelError => new KernelError('INVALID_INPUT', message, { details: { field } });

/**
 * Jobs (long actions) over HTTP, for administrators: the list, one job's record, its events as SSE
 * (`job` with the record as it is now, then `progress` events and one `end`), and cancel.
 */
export function jobRoutes(jobs: () => JobManager): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json(jobsPage(jobs().list(), (name) => c.req.query(name))));
  app.get('/:id', (c) => c.json({ job: jobs().get(c.req.param('id')) }));
  app.post('/:id/cancel', (c) => {
    const job = jobs().cancel(c.req.param('id'));
    return c.json({ job, cancelling: !isFinished(job.state) });
  });
  app.get('/:id/events', (c) => {
    const manager = jobs();
    const first = manager.get(c.req.param('id'));
    return streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: 'job', data: JSON.stringify({ job: first }) });
      if (isFinished(first.state)) {
        await stream.writeSSE({ event: 'end', data: JSON.stringify({ job: first }) });
        return;
      }
      // One event waits at most: each carries the whole record as it is now, so a later one replaces the
      // one waiting (a promise per progress report was chained before, all of them held for a client
      // that read slowly or not at all), and `end` is never replaced.
      let waiting: JobEvent | undefined;
      let writing: Promise<void> | undefined;
      const pump = async (): Promise<void> => {
        while (waiting) {
          const event = waiting;
          waiting = undefined;
          await stream.writeSSE({ event: event.type, data: JSON.stringify({ job: event.job }) }).catch(() => undefined);
        }
        writing = undefined;
      };
      const push = (event: JobEvent): void => {
        if (waiting?.type === 'end') return;
        waiting = event;
        writing ??= pump();
      };
      await new Promise<void>((resolve) => {
        const unwatch = manager.watch(first.id, (event: JobEvent) => {
          push(event);
          if (event.type === 'end') resolve();
        });
        stream.onAbort(() => { unwatch(); resolve(); });
        // It may have ended between the first read and the watch.
        if (isFinished(manager.get(first.id).state)) {
          unwatch();
          push({ type: 'end', job: manager.get(first.id) });
          resolve();
        }
      });
      while (writing) await writing;
    });
  });
  return app;
}
