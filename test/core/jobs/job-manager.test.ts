import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KernelError } from '../../../core/errors.js';
import { JobManager } from '../../../core/jobs/job-manager.js';
import { silentLogger } from '../../../core/log.js';
import type { Principal } from '../../../core/plugin-api.js';

const alice: Principal = { kind: 'person', name: 'alice', role: 'admin' };
const subject = (name: string) => ({ action: `blocks/import/${name}`, plugin: 'blocks', tool: 'import', name, principal: alice });

describe('the job manager', () => {
  const folders: string[] = [];
  afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }); });
  const manager = async (keep: number, abandonedLimitMs?: number) => {
    const folder = await mkdtemp(join(tmpdir(), 'quire-jobs-'));
    folders.push(folder);
    const jobs = new JobManager(folder, keep, silentLogger, abandonedLimitMs);
    await jobs.load();
    return jobs;
  };

  it('keeps the records that ended last, and always the one that just ended, however long ago it began', async () => {
    const jobs = await manager(1);
    let finishLong!: (value: unknown) => void;
    const long = jobs.start(subject('long'), () => new Promise((resolve) => { finishLong = resolve; }));
    // Ids order by the second they were made in: the others begin a second later, as after a long import's start.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const short = jobs.start(subject('short'), async () => 'quick');
    await short.done;
    const later = jobs.start(subject('later'), async () => 'also quick');
    await later.done;
    finishLong('a whole import');
    await long.done;
    // Begun first, ended last: its caller, waiting for the answer, finds its record.
    expect(jobs.get(long.record.id)).toMatchObject({ state: 'succeeded', result: 'a whole import' });
    expect(() => jobs.get(short.record.id)).toThrow(/No job/);
  });

  it('closing: a job stopped by it at a safe point is cancelled, one still running when the wait ends is interrupted with how far it came; none starts after', async () => {
    const jobs = await manager(10);
    const stops = jobs.start(subject('stops'), (control) => new Promise((_resolve, reject) => {
      control.progress({ done: 3, total: 10, ifInterrupted: 'undone at the next start' });
      control.signal.addEventListener('abort', () => {
        control.stopped('cancelled');
        reject(new KernelError('ACTION_CANCELLED', 'stopped at a safe point'));
      });
    }));
    stops.done.catch(() => undefined);
    const deaf = jobs.start(subject('deaf'), (control) => new Promise(() => control.progress({ done: 7 })));
    // One that fails on its own while the kernel closes (a full disk) keeps its error.
    const full = jobs.start(subject('full'), (control) => new Promise((_resolve, reject) => {
      control.signal.addEventListener('abort', () => reject(new KernelError('DISK_FULL', 'no room left for the import')));
    }));
    full.done.catch(() => undefined);
    await jobs.close(100);
    // It answered (before writing anything): what a crash would leave ("undone at the next start") is not its case.
    expect(jobs.get(stops.record.id)).toMatchObject({ state: 'cancelled', stopped: 'cancelled', error: { code: 'ACTION_CANCELLED', message: 'the kernel was closing: this job stopped at a safe point, before writing anything' } });
    expect(jobs.get(deaf.record.id)).toMatchObject({ state: 'interrupted', error: { code: 'JOB_INTERRUPTED', message: 'the kernel stopped while this job ran; it had done 7' } });
    expect(jobs.get(full.record.id)).toMatchObject({ state: 'failed', error: { code: 'DISK_FULL' } });
    expect(() => jobs.start(subject('late'), async () => 'never')).toThrow(expect.objectContaining({ code: 'NOT_READY' }));
  });
  it('keeps a job whose work did not stop when asked running until it ends, and ends it at its cap saying it may still run', async () => {
    const jobs = await manager(10, 200);
    const gaveUp = new KernelError('ACTION_CANCELLED', 'did not stop', { details: { stillRunning: true } });
    let late!: (value: unknown) => void;
    const answered = jobs.start(subject('late'), (control) => {
      late = (value) => control.late({ ok: true, value });
      control.stopped('cancelled');
      control.abandoned();
      return Promise.reject(gaveUp);
    });
    await expect(answered.done).rejects.toBe(gaveUp);
    expect(jobs.get(answered.record.id).state).toBe('running');
    late({ all: 'done' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(jobs.get(answered.record.id)).toMatchObject({ state: 'succeeded', result: { all: 'done' } });
    const never = jobs.start(subject('never'), (control) => { control.stopped('cancelled'); control.abandoned(); return Promise.reject(gaveUp); });
    await expect(never.done).rejects.toBe(gaveUp);
    expect(jobs.get(never.record.id).state).toBe('running');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(jobs.get(never.record.id)).toMatchObject({ state: 'cancelled', error: { code: 'ACTION_CANCELLED', details: { stillRunning: true } } });
  });
});
