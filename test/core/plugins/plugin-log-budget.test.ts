import { describe, expect, it } from 'vitest';
import { Kernel } from '../../../core/kernel.js';
import { createLogger } from '../../../core/log.js';
import { useHarness } from '../../helpers/harness.js';

/** A plugin in a process of its own whose action logs in a loop, the first record with a huge field. */
const chatty = {
  manifest: {
    id: 'chatty', version: '1.0.0', kernel: '^0.1.0', description: 'logs a lot', entry: 'index.js',
    tools: [{ name: 'chatty', description: 'x', actions: { flood: { description: 'logs in a loop', input: { type: 'object' }, effects: [] } } }],
  },
  code: `export default { activate(ctx) { return { chatty: { flood: () => {
    ctx.log.info('huge fields', { blob: 'x'.repeat(100000) });
    for (let i = 0; i < 5000; i++) ctx.log.info('line ' + i);
    console.log('and an output line');
    return { logged: 5001 };
  } } }; } };`,
};

describe('what a plugin in a process of its own writes to the kernel\'s log', () => {
  const harness = useHarness();

  it('is bounded: lines past the rate are dropped and counted, fields past 8 KB replaced by their size', async () => {
    const records: { message: string; tag?: string; dropped?: number; fieldsOmitted?: string; blob?: string }[] = [];
    const options = await harness.kernelOptions({ userPlugins: { chatty }, plugins: [] });
    const kernel = await Kernel.boot({ ...options, logger: createLogger({ level: 'debug', sink: { write: (line) => records.push(JSON.parse(line) as (typeof records)[number]) } }) });
    try {
      const started = Date.now();
      const outcome = await kernel.pipeline.call({ target: 'chatty_flood', input: {}, principal: { kind: 'person', name: 'alice', role: 'admin' } });
      expect(outcome).toMatchObject({ status: 'ok', value: { logged: 5001 } });
      const seconds = (Date.now() - started) / 1000 + 1;
      await expect.poll(() => records.some((record) => record.message === 'plugin log lines dropped')).toBe(true);
      const fromPlugin = records.filter((record) => record.message.startsWith('line '));
      expect(fromPlugin.length).toBeLessThanOrEqual(200 + Math.ceil(100 * seconds));
      const huge = records.find((record) => record.message === 'huge fields');
      expect(huge?.blob).toBeUndefined();
      expect(huge?.fieldsOmitted).toMatch(/over 8192/);
      // Every line is written or counted as dropped (the count is said within a second).
      const dropped = () => records.filter((record) => record.message === 'plugin log lines dropped').reduce((sum, record) => sum + (record.dropped ?? 0), 0);
      await expect.poll(() => dropped() + records.filter((record) => record.message.startsWith('line ')).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(5000);
    } finally {
      await kernel.close();
    }
  });
});
