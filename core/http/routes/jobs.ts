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
      let writing: Promise<void> = Promise.resolve();
      await new Promise<void>((resolve) => {
        const unwatch = manager.watch(first.id, (event: JobEvent) => {
          writing = writing.then(() => stream.writeSSE({ event: event.type, data: JSON.stringify({ job: event.job }) })).catch(() => undefined);
          if (event.type === 'end') resolve();
        });
        stream.onAbort(() => { unwatch(); resolve(); });
        // It may have ended between the first read and the watch.
        if (isFinished(manager.get(first.id).state)) {
          unwatch();
          writing = writing.then(() => stream.writeSSE({ event: 'end', data: JSON.stringify({ job: manager.get(first.id) }) })).catch(() => undefined);
          resolve();
        }
      });
      await writing;
    });
  });
  return app;
}
