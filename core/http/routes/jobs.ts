import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { JobManager } from '../../jobs/job-manager.js';
import { isFinished, type JobEvent } from '../../jobs/job-types.js';
import type { HttpEnv } from '../http-env.js';

/**
 * Jobs (long actions) over HTTP, for administrators: the list, one job's record, its events as SSE
 * (`job` with the record as it is now, then `progress` events and one `end`), and cancel.
 */
export function jobRoutes(jobs: () => JobManager): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json({ jobs: jobs().list() }));
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
