/**
 * The web app's weight and load time (issue 19 point 6), in Debian's Chromium against a real kernel:
 *
 *   npm run build && node dist/bench/web-load.js [DOCUMENTS=10000] [ROUNDS=5]
 *
 * Printed: the JavaScript and CSS the app loads, raw and gzipped as served; the median time from
 * navigation to the sign-in form, and to a signed-in document rendered (token already in the tab),
 * against the baseline of the same browser loading the kernel's smallest page (`/healthz`) in the same
 * run; and the time to open a notebook of DOCUMENTS documents in the tree. Load average with each.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { startHttpServer } from '../core/http/serve.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { PACKAGE_ROOT } from '../core/paths.js';

const TOKEN = 'qk_bench-web-admin';
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const documents = Number(process.argv[2] ?? 10_000);
  const rounds = Number(process.argv[3] ?? 5);
  const assets = join(PACKAGE_ROOT, 'dist', 'web', 'assets');
  let raw = 0;
  let gzipped = 0;
  for (const file of readdirSync(assets)) {
    const bytes = readFileSync(join(assets, file));
    raw += bytes.length;
    gzipped += gzipSync(bytes, { level: 9 }).length;
    console.log(`  ${file}: ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1)} KB gzipped`);
  }
  console.log(`app files: ${(raw / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped (target: under 300 KB of JavaScript compressed)`);

  const root = mkdtempSync(join(tmpdir(), 'quire-web-bench-'));
  const kernel = await Kernel.boot({
    workspace: join(root, 'ws'), logger: silentLogger,
    config: { auth: { tokens: [{ name: 'bench', role: 'admin', sha256: createHash('sha256').update(TOKEN).digest('hex') }] }, plugins: { blocks: { config: { watch: false, welcome: false } } } },
  });
  const person = { kind: 'person' as const, name: 'bench', role: 'admin' as const };
  const call = async (target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: person });
    if (outcome.status !== 'ok') throw new Error('unexpected confirmation');
    return outcome.value as Record<string, unknown>;
  };
  const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({ executablePath: process.env.QUIRE_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const notebook = await call('notebook_create', { name: 'Big' }) as { id: string };
    const paragraph = 'A paragraph of about four hundred characters, the size of the corpus used by the other benchmarks, with a **bold** word, a #tag# and `code`. '.repeat(3);
    const doc = await call('document_create', { notebook: notebook.id, title: 'Read me', markdown: Array.from({ length: 100 }, (_, i) => (i % 10 === 0 ? `## Section ${i}` : paragraph)).join('\n\n') }) as { id: string };
    let started = performance.now();
    for (let i = 1; i < documents; i++) await call('document_create', { notebook: notebook.id, title: `Document ${String(i).padStart(5, '0')}` });
    console.log(`workspace: ${documents} documents in one notebook (created in ${((performance.now() - started) / 1000).toFixed(1)} s), one of 100 blocks; load ${load()}`);

    const timings = { baseline: [] as number[], signIn: [] as number[], document: [] as number[], tree: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      started = performance.now();
      await page.goto(`${server.url}/healthz`, { waitUntil: 'load' });
      timings.baseline.push(performance.now() - started);
      started = performance.now();
      await page.goto(`${server.url}/`, { waitUntil: 'load' });
      await page.getByLabel('Token').waitFor();
      timings.signIn.push(performance.now() - started);
      await page.evaluate(`sessionStorage.setItem('quire.token', ${JSON.stringify(TOKEN)})`);
      // A new load of the page (going to the same URL with another hash would only change the hash).
      await page.goto(`${server.url}/healthz`);
      started = performance.now();
      await page.goto(`${server.url}/#/doc/${doc.id}`, { waitUntil: 'load' });
      await page.locator('article.document h3', { hasText: 'Section 90' }).waitFor({ timeout: 30_000 });
      timings.document.push(performance.now() - started);
      started = performance.now();
      await page.getByRole('link', { name: 'Document 00150' }).waitFor({ timeout: 60_000 });
      timings.tree.push(performance.now() - started);
      await context.close();
    }
    const base = median(timings.baseline);
    console.log(`baseline (GET /healthz in the same browser): ${base.toFixed(0)} ms`);
    console.log(`sign-in form shown:              ${median(timings.signIn).toFixed(0)} ms (${(median(timings.signIn) / base).toFixed(1)}× the baseline)`);
    console.log(`document of 100 blocks rendered: ${median(timings.document).toFixed(0)} ms (${(median(timings.document) / base).toFixed(1)}× the baseline; target under 1 s)`);
    console.log(`tree of ${documents} documents, first 200 drawn (after the document): ${median(timings.tree).toFixed(0)} ms`);
    console.log(`medians of ${rounds} rounds; load ${load()}`);
  } finally {
    await browser.close();
    await server.close();
    await kernel.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
