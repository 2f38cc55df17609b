import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `quire serve` of the built CLI `cli` on a free loopback port, as the benchmarks start it; resolves
 * with its address once it listens, or rejects with what it printed if it ends before.
 */
export async function serveChild(cli: string, workspace: string, nodeArgs: readonly string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--workspace', workspace, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // What it prints is kept until it listens (for the error), and read but dropped after: a pipe left
  // unread would stop a server that logs much, and a long run would otherwise keep it all.
  let printed = '';
  let listening = false;
  const keep = (chunk: Buffer): void => { if (!listening) printed += chunk.toString(); };
  child.stderr!.on('data', keep);
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      const match = listening ? null : /(http:\/\/127\.0\.0\.1:\d+)/.exec(printed);
      if (match) {
        listening = true;
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve ended (${code}) before listening: ${printed}`)));
  });
  return { child, url };
}
