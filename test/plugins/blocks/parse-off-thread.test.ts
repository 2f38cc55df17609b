import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { serveBuiltKernel } from '../../helpers/built-kernel.js';
import { useHarness } from '../../helpers/harness.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';
import { measured } from '../../helpers/loop-gap.js';

/**
 * The built kernel, loaded in this process (helpers/built-kernel.ts): only compiled, the blocks plugin
 * has its Markdown worker beside it, and only in this process can the event loop's stalls be measured.
 */
/**
 * A generous bound on one turn of the event loop while the kernel works: far from any real turn, far
 * below a stall (200 ms could be passed by a loaded 2-core machine's scheduling and a major GC alone).
 */
const STALL_MS = 500;

interface Created { id: string }

async function threads(): Promise<number> {
  return (await readdir('/proc/self/task')).length;
}

async function snapshotData(dataDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return out;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('Markdown parsed off the main thread (the built kernel over HTTP)', () => {
  const { tempDir } = useHarness();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => { for (const close of closers.splice(0).reverse()) await close(); });

  async function serve(config: KernelConfigFile = {}) {
    const { kernel, url, call: callPath } = await serveBuiltKernel(join(await tempDir(), 'workspace'), config, closers);
    const call = (action: string, input: Record<string, unknown>): Promise<RawResponse> => callPath(`blocks/${action}`, input);
    const notebook = (await call('notebook/create', { name: 'N' })).json().result as Created;
    const doc = (await call('document/create', { notebook: notebook.id, title: 'D', markdown: 'first' })).json().result as Created;
    return { kernel, url, call, doc: doc.id };
  }

  it('answers 150 KB of nested brackets, and /healthz while it works, without holding the event loop', async () => {
    const { url, call, doc } = await serve();
    const markdown = '['.repeat(150_000);
    const { value: [appended, health], maxDelayMs } = await measured(() => Promise.all([
      call('block/append', { parentId: doc, markdown }),
      rawRequest(`${url}/healthz`),
    ]));
    expect(appended.status).toBe(200);
    expect(health.status).toBe(200);
    expect(maxDelayMs).toBeLessThan(STALL_MS);
    const [id] = (appended.json().result as { ids: string[] }).ids;
    const block = (await call('block/get', { id })).json().result as { block: { content: string } };
    expect(block.block.content).toBe(markdown);
  });

  it('stops a parse that passes the call\'s time limit: 504 ACTION_TIMEOUT, the worker thread ended, nothing written, the next parse fine', async () => {
    const { kernel, url, call, doc } = await serve({ actions: { timeoutMs: 5_000 }, server: { bodyLimitBytes: 4 * 1024 * 1024 } });
    // Start the worker: a list is slow to parse for its size, but this one is short.
    expect((await call('block/append', { parentId: doc, markdown: '- a\n'.repeat(600) })).status).toBe(200);
    const before = await snapshotData(kernel.workspace.dataDir);
    // A megabyte of list items: over half a minute of parsing on an idle machine, several times the limit.
    const markdown = '- a\n'.repeat(250_000);
    let busyThreads = 0;
    const { value: [refused, health], maxDelayMs } = await measured(() => Promise.all([
      call('block/append', { parentId: doc, markdown }),
      new Promise<RawResponse>((resolve) => setTimeout(() => {
        void threads().then((count) => { busyThreads = count; });
        resolve(rawRequest(`${url}/healthz`));
      }, 1_000)),
    ]));
    expect(refused.status).toBe(504);
    expect(refused.json().error?.code).toBe('ACTION_TIMEOUT');
    expect(health.status).toBe(200);
    expect(maxDelayMs).toBeLessThan(STALL_MS);
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
    // The thread that was parsing is gone, not left to run for its half minute.
    await eventually(async () => (await threads()) < busyThreads);
    const after = await call('block/append', { parentId: doc, markdown: '- b\n'.repeat(600) });
    expect(after.status).toBe(200);
  });
});
