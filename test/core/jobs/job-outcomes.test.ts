import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { JobRecord } from '../../../core/jobs/job-types.js';
import type { Kernel } from '../../../core/kernel.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';

const ADMIN = 'qk_job-outcomes-admin';
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] };

/**
 * A long action writing `count` files, 10 ms apart. Past `pointOfNoReturn` files it no longer stops (a
 * rollback applying its files): it goes on to the end; before, it stops at its next file, saying so.
 */
function writer(folder: string): UserPlugin {
  return {
    manifest: {
      id: 'writer', version: '1.0.0', kernel: '^0.1.0', description: 'writes files slowly', entry: 'main.js',
      tools: [{ name: 'files', description: 'files', actions: {
        write: { description: 'writes count files', long: true, effects: ['localWrite'], input: { type: 'object', required: ['count', 'prefix', 'pointOfNoReturn'], properties: { count: { type: 'integer' }, prefix: { type: 'string' }, pointOfNoReturn: { type: 'integer' } } } },
        raise: { description: 'fails saying its outcome is unknown', long: true, effects: ['localWrite'], input: { type: 'object' } },
        nap: { description: 'waits 5 s on its signal', long: true, effects: ['localWrite'], input: { type: 'object' } },
        full: { description: 'fails with a full disk once stopped', long: true, effects: ['localWrite'], input: { type: 'object' } },
      } }],
    },
    entry: 'main.js',
    code: `import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
export default {
  activate() {
    return { files: {
    raise: async () => { throw Object.assign(new Error('the server did not answer'), { code: 'UPSTREAM_TIMEOUT', details: { stillRunning: true } }); },
    nap: async (_input, call) => { await sleep(5000, null, { signal: call.signal }); return { napped: true }; },
    full: async (_input, call) => {
      await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
      throw Object.assign(new Error('no room left on the device'), { code: 'DISK_FULL' });
    },
    write: async (input, call) => {
      for (let i = 0; i < input.count; i++) {
        if (call.stopped && i < input.pointOfNoReturn) return { written: i, stopped: call.stopped, message: 'wrote ' + i + ' of ' + input.count };
        await writeFile(join(${JSON.stringify(folder)}, input.prefix + '-' + i), 'x');
        call.progress({ done: i + 1, total: input.count });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return { written: input.count };
    } } };
  },
};`,
  };
}

describe('a job\'s record says what its work did, not what it was asked', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(config: KernelConfigFile = {}): Promise<{ kernel: Kernel; url: string; folder: string }> {
    const folder = await harness.tempDir('quire-job-files-');
    const kernel = await harness.boot({
      realManifests: true, userPlugins: { writer: writer(folder) },
      config: { auth, ...config, plugins: { blocks: { config: { watch: false, welcome: false } }, writer: { trusted: true } } },
    });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, url: server.url, folder };
  }

  const post = (url: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  async function start(url: string, input: Record<string, unknown>, action = 'write'): Promise<string> {
    const answer = await post(url, `/api/actions/writer/files/${action}`, input);
    expect(answer.status).toBe(202);
    return ((await answer.json()) as { job: JobRecord }).job.id;
  }

  async function until(kernel: Kernel, id: string, done: (job: JobRecord) => boolean): Promise<JobRecord> {
    // A deadline, not a count of turns: 400 × 10 ms was about 4 s, which a slow disk's writes could pass.
    for (const end = Date.now() + 20_000; Date.now() < end;) {
      const job = kernel.jobs.get(id);
      if (done(job)) return job;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`job ${id} never got there: ${JSON.stringify(kernel.jobs.get(id))}`);
  }

  it('a cancel after the point of no return: the job did everything and succeeded; one before it: cancelled, with what it did', async () => {
    const { kernel, url, folder } = await serve();
    const late = await start(url, { count: 30, prefix: 'late', pointOfNoReturn: 0 });
    await until(kernel, late, (job) => job.progress.done >= 3);
    expect((await (await post(url, `/api/jobs/${late}/cancel`, {})).json()).cancelling).toBe(true);
    const ended = await until(kernel, late, (job) => job.state !== 'running');
    expect(ended).toMatchObject({ state: 'succeeded', result: { written: 30 } });
    expect(ended.stopped).toBeUndefined();
    expect((await readdir(folder)).filter((name) => name.startsWith('late-'))).toHaveLength(30);

    const early = await start(url, { count: 30, prefix: 'early', pointOfNoReturn: 30 });
    await until(kernel, early, (job) => job.progress.done >= 3);
    await post(url, `/api/jobs/${early}/cancel`, {});
    const stopped = await until(kernel, early, (job) => job.state !== 'running');
    expect(stopped).toMatchObject({ state: 'cancelled', stopped: 'cancelled', result: { stopped: 'cancelled' } });
    expect((await readdir(folder)).filter((name) => name.startsWith('early-'))).toHaveLength((stopped.result as { written: number }).written);
  });

  it('work that outlasts its grace after a cancel: the record stays running until it ends, then says how', async () => {
    const { kernel, url, folder } = await serve({ actions: { stopGraceMs: 50 } });
    const id = await start(url, { count: 40, prefix: 'long', pointOfNoReturn: 0 });
    await until(kernel, id, (job) => job.progress.done >= 3);
    await post(url, `/api/jobs/${id}/cancel`, {});
    // Past the grace, the caller was answered "may still be running"; the work goes on, and so does its record.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(kernel.jobs.get(id).state).toBe('running');
    const ended = await until(kernel, id, (job) => job.state !== 'running');
    expect(ended).toMatchObject({ state: 'succeeded', result: { written: 40 } });
    expect(ended.error).toBeUndefined();
    expect(await readdir(folder)).toHaveLength(40);
  });

  it('a plugin\'s own error saying its outcome is unknown ends the job at once, failed with that error; one failing on its stop is cancelled', async () => {
    const { kernel, url } = await serve();
    const raised = await start(url, {}, 'raise');
    const failed = await until(kernel, raised, (job) => job.state !== 'running');
    expect(failed).toMatchObject({ state: 'failed', error: { code: 'UPSTREAM_TIMEOUT', details: { stillRunning: true } } });
    // Node's AbortError from a timer watching the signal: the job stopped for the cancel.
    const napping = await start(url, {}, 'nap');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await post(url, `/api/jobs/${napping}/cancel`, {});
    expect(await until(kernel, napping, (job) => job.state !== 'running')).toMatchObject({ state: 'cancelled', stopped: 'cancelled' });
    // One that fails otherwise once stopped (a full disk) failed, and says why; also when the kernel closes.
    const full = await start(url, {}, 'full');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await post(url, `/api/jobs/${full}/cancel`, {});
    expect(await until(kernel, full, (job) => job.state !== 'running')).toMatchObject({ state: 'failed', error: { code: 'DISK_FULL' } });
    const closing = await start(url, {}, 'full');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await servers.pop()!.close();
    await kernel.close();
    expect(kernel.jobs.get(closing)).toMatchObject({ state: 'failed', error: { code: 'DISK_FULL' } });
  });

  it('a job that stops at a safe point as the kernel closes is cancelled with its result, not interrupted "to be undone"', async () => {
    const { kernel, url } = await serve();
    const id = await start(url, { count: 200, prefix: 'closing', pointOfNoReturn: 200 });
    await until(kernel, id, (job) => job.progress.done >= 3);
    await servers.pop()!.close();
    await kernel.close();
    const record = kernel.jobs.get(id);
    expect(record).toMatchObject({ state: 'cancelled', stopped: 'cancelled', result: { stopped: 'cancelled' }, error: { code: 'ACTION_CANCELLED' } });
    expect(record.error!.message).toMatch(/^the kernel was closing: this job stopped at a safe point, after \d+ of 200; its result says what it did$/);
  });
});
