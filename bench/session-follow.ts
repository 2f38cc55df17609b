/**
 * Following a turn started elsewhere (the web app after a reload, a second tab): each poll read the
 * whole session; it now reads from the turn's user entry on (`entriesFrom` + `revision`). A long
 * session of tool results holding documents of the realistic corpus (`../shared/bench/corpus.mjs`),
 * a turn running, GET over the HTTP app: the whole against from the turn on, time and bytes; and the
 * read of a session's opening in the web app (`?tail=200`) against the whole it read before.
 *
 *   node /work/shared/bench/corpus.mjs /tmp/turn-corpus 4000 1
 *   CORPUS=/tmp/turn-corpus ENTRIES=4000 node dist/bench/session-follow.js
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpApp } from '../core/http/app.js';
import { newId } from '../core/ids.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { MODEL_PROVIDER } from '../core/turn/model-provider-token.js';
import type { ModelEvent, ModelProvider } from '../core/turn/model-provider.js';

const CORPUS = process.env.CORPUS ?? '/tmp/turn-corpus';
const ENTRIES = Number(process.env.ENTRIES ?? 4000);
const READS = Number(process.env.READS ?? 10);
/** The entries the web app reads on opening a session. */
const TAIL = Number(process.env.TAIL ?? 200);
const TOKEN = 'qk_bench-session-follow';

function documents(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md') && found.length < 2000) found.push(readFileSync(join(dir, entry.name), 'utf8'));
    }
  };
  walk(folder);
  if (found.length === 0) throw new Error(`no documents in ${folder}: run node /work/shared/bench/corpus.mjs ${folder} 4000 1 first`);
  return found;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const docs = documents(CORPUS);
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-follow-'));
  const kernel = await Kernel.boot({
    workspace: join(root, 'ws'), logger: silentLogger,
    config: { agent: { requireSnapshot: false }, plugins: { blocks: { config: { watch: false } } }, auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(TOKEN).digest('hex') }] } },
  });
  let release: () => void = () => undefined;
  const model: ModelProvider = {
    id: 'thinking',
    async *stream(_request, signal): AsyncGenerator<ModelEvent> {
      yield { type: 'text', delta: 'Reading the notes again.' };
      await new Promise<void>((resolve) => { release = resolve; signal.addEventListener('abort', () => resolve(), { once: true }); });
    },
  };
  kernel.container.registerInstance(MODEL_PROVIDER, model);
  const app = createHttpApp(kernel);
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  try {
    const id = newId();
    const entries = Array.from({ length: ENTRIES }, (_, i) => i % 2 === 0
      ? { id: `u${i}`, type: 'user', content: `What do my notes say about item ${i}?` }
      : { id: `a${i}`, type: 'assistant', content: 'Here is what the document says.', toolCalls: [{ id: `c${i}`, name: 'document_get', arguments: { n: i }, state: 'finished', result: docs[i % docs.length]! }] });
    await kernel.sessions.save({ id, title: 'Long', entries });
    const turn = await app.request(`/api/agent/sessions/${id}/turns`, { method: 'POST', headers, body: JSON.stringify({ message: 'And now?' }) });
    const reader = turn.body!.getReader();
    // The turn runs once its first event has come.
    await reader.read();
    const get = async (query: string): Promise<{ ms: number; bytes: number; body: { session: { revision: number; recoveryFrom?: number; entries: unknown[] }; entriesFrom?: number } }> => {
      const started = performance.now();
      const response = await app.request(`/api/agent/sessions/${id}${query}`, { headers });
      const text = await response.text();
      const body = JSON.parse(text) as { session: { revision: number; recoveryFrom?: number; entries: unknown[] }; entriesFrom?: number };
      return { ms: performance.now() - started, bytes: Buffer.byteLength(text), body };
    };
    const first = await get('');
    const query = `?entriesFrom=${first.body.session.recoveryFrom ?? first.body.session.entries.length}&revision=${first.body.session.revision}`;
    const whole: number[] = [];
    const part: number[] = [];
    const tail: number[] = [];
    let wholeBytes = 0;
    let partBytes = 0;
    let partCount = 0;
    let tailBytes = 0;
    let tailCount = 0;
    for (let i = 0; i < READS; i++) {
      const a = await get('');
      whole.push(a.ms);
      wholeBytes = a.bytes;
      const b = await get(query);
      part.push(b.ms);
      partBytes = b.bytes;
      partCount = b.body.session.entries.length;
      // Opening a session in the web app: its last 200 entries (`tail`), from the user message that began their turn.
      const c = await get(`?tail=${TAIL}`);
      tail.push(c.ms);
      tailBytes = c.bytes;
      tailCount = c.body.session.entries.length;
    }
    console.log(`a session of ${ENTRIES} entries (${(wholeBytes / 1048576).toFixed(1)} MiB as read), a turn running; ${READS} reads each, load ${loadavg()[0]!.toFixed(2)}`);
    console.log(`  whole (the poll before):        median ${median(whole).toFixed(1)} ms, ${(wholeBytes / 1024).toFixed(0)} KiB`);
    console.log(`  from the turn on (${partCount} entries): median ${median(part).toFixed(2)} ms, ${(partBytes / 1024).toFixed(1)} KiB (${(median(whole) / median(part)).toFixed(0)}x quicker, ${(wholeBytes / partBytes).toFixed(0)}x fewer bytes)`);
    console.log(`  opening, ?tail=${TAIL} (${tailCount} entries): median ${median(tail).toFixed(1)} ms, ${(tailBytes / 1024).toFixed(0)} KiB (${(median(whole) / median(tail)).toFixed(1)}x quicker, ${(wholeBytes / tailBytes).toFixed(1)}x fewer bytes)`);
    release();
    while (!(await reader.read()).done) { /* the turn's remaining events */ }
  } finally {
    await kernel.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
