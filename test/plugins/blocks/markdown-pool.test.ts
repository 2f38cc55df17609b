import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { MarkdownFileParser, ParsedText } from '../../../plugins/blocks/markdown-parser.js';
import { parseMarkdownText } from '../../../plugins/blocks/markdown-parser.js';
import { REPO_ROOT } from '../../helpers/harness.js';

/** Only the built module has its worker beside it (see markdown-worker.test.ts). */
const BUILT = join(REPO_ROOT, 'dist', 'plugins', 'blocks');
/** A megabyte of list items: tens of seconds for the parser, so it is still running when it is stopped. */
const SLOW = '- a\n'.repeat(250_000);

async function parser(): Promise<MarkdownFileParser> {
  expect(existsSync(join(BUILT, 'markdown-worker.js'))).toBe(true);
  const module = await import(pathToFileURL(join(BUILT, 'markdown-parser.js')).href) as { createMarkdownFileParser(): MarkdownFileParser };
  return module.createMarkdownFileParser();
}

async function threads(): Promise<number> {
  return (await readdir('/proc/self/task')).length;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const stopped = (): AbortController => new AbortController();
const reasonOf = async (promise: Promise<ParsedText>): Promise<unknown> => promise.then(() => 'parsed', (error: unknown) => error);

describe('Markdown of calls parsed on workers (the built kernel)', () => {
  it('parses on a worker exactly as on this thread, and refuses too deep a text the same way', async () => {
    const pool = await parser();
    try {
      for (const markdown of ['# T\n\n- a\n  - b\n\n> q\n', `${'> '.repeat(64)}x`, `${'> '.repeat(3_000)}x`]) {
        expect(await pool.parseText(markdown)).toEqual(parseMarkdownText(markdown));
      }
    } finally {
      await pool.close();
    }
  });

  it('ends the worker of a parse whose caller gives up, drops a waiting one unstarted, and parses the next', async () => {
    const pool = await parser();
    try {
      const base = await threads();
      const [first, second, third] = [stopped(), stopped(), stopped()];
      const running = [pool.parseText(SLOW, first.signal), pool.parseText(SLOW, second.signal)];
      const waiting = pool.parseText('# waits its turn', third.signal);
      await eventually(async () => (await threads()) >= base + 2);
      const busy = await threads();
      third.abort('gave up waiting');
      expect(await reasonOf(waiting)).toBe('gave up waiting');
      // No third worker was started for it.
      expect(await threads()).toBe(busy);
      first.abort('time limit');
      second.abort('cancelled');
      expect(await Promise.all(running.map(reasonOf))).toEqual(['time limit', 'cancelled']);
      await eventually(async () => (await threads()) <= base);
      expect(await pool.parseText('- next\n')).toEqual(parseMarkdownText('- next\n'));
    } finally {
      await pool.close();
    }
  });

  it('answers a stopped caller at once, and refuses work once closed', async () => {
    const pool = await parser();
    const gone = stopped();
    gone.abort('already stopped');
    expect(await reasonOf(pool.parseText('x', gone.signal))).toBe('already stopped');
    const pending = pool.parseText(SLOW);
    await pool.close();
    expect(await reasonOf(pending)).toBeInstanceOf(Error);
    expect(await reasonOf(pool.parseText('x'))).toBeInstanceOf(Error);
  });
});
