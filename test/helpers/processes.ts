import { readdir, readFile } from 'node:fs/promises';

/** The pids of the processes whose command line holds every one of `words` (from /proc). */
export async function processesRunning(...words: string[]): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // Empty for a process gone meanwhile, or a zombie.
    const command = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (words.every((word) => command.includes(word))) pids.push(Number(entry));
  }
  return pids;
}
