import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Times read in the local zone (a SiYuan export's) have fixed expectations: one zone for every machine.
    env: { TZ: 'UTC' },
    hookTimeout: 30_000,
    // expect.poll's default second was passed by cross-process events (an audit line, a tool list) under load.
    expect: { poll: { timeout: 10_000 } },
    // Each file in its own process: the egress guard patches process-wide globals.
    pool: 'forks',
    // Two files at a time at least: vitest's default (the cores less one) runs them one by one on a machine
    // of two cores, where most of them wait (on child processes, fsyncs, timers) more than they compute:
    // the whole suite took 575 s one by one in CI, 420 s two at a time here.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
