/**
 * Start-up of `quire serve` (issue 14 point 8): time to "Listening on", time to the first search
 * answered, and the CPU the process had used at each (from /proc, so that a loaded machine shows what the
 * start costs, not only how long it waited). Several builds alternate start by start in one run.
 *
 *   node dist/bench/start-up.js ROUNDS PROJECT_DIR:WORKSPACE [PROJECT_DIR:WORKSPACE...]
 * Each workspace needs `bench-token` (an admin token, as the shared benchmarks' workspaces have) and an
 * index of its build's schema (else its first start rebuilds the index): give builds of different index
 * schemas copies of one workspace.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const [roundsText, ...projects] = process.argv.slice(2);
if (!roundsText || projects.length === 0) throw new Error('usage: start-up ROUNDS PROJECT_DIR:WORKSPACE [PROJECT_DIR:WORKSPACE...]');
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

/** User + system CPU of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Start { listenMs: number; listenCpu: number; searchMs: number; searchCpu: number }

async function start(pair: string): Promise<Start> {
  const [project, workspace] = pair.split(':') as [string, string];
  const token = readFileSync(join(workspace, 'bench-token'), 'utf8').trim();
  const began = performance.now();
  const child = spawn(process.execPath, [join(project, 'dist/core/cli/main.js'), 'serve', '--workspace', workspace, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (data: Buffer) => {
      out += data.toString();
      const match = /Listening on (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
  const listenMs = performance.now() - began;
  const listenCpu = cpuMs(child.pid!);
  for (;;) {
    const response = await fetch(`${url}/api/actions/search-fulltext/search/fulltext`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'kalo' }),
    }).catch(() => undefined);
    if (response?.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const result = { listenMs, listenCpu, searchMs: performance.now() - began, searchCpu: cpuMs(child.pid!) };
  await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); });
  return result;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const all = new Map<string, Start[]>(projects.map((project) => [project, []]));
console.log(`node ${process.version}, load ${load()}`);
for (let round = 0; round < Number(roundsText); round++) {
  for (const project of round % 2 === 0 ? projects : [...projects].reverse()) {
    const s = await start(project);
    all.get(project)!.push(s);
    console.log(`${project}: listening ${s.listenMs.toFixed(0)} ms (CPU ${s.listenCpu} ms), first search ${s.searchMs.toFixed(0)} ms (CPU ${s.searchCpu} ms), load ${load()}`);
  }
}
for (const [project, starts] of all) {
  console.log(`median ${project}: listening ${median(starts.map((s) => s.listenMs)).toFixed(0)} ms (CPU ${median(starts.map((s) => s.listenCpu))} ms), first search ${median(starts.map((s) => s.searchMs)).toFixed(0)} ms (CPU ${median(starts.map((s) => s.searchCpu))} ms)`);
}
