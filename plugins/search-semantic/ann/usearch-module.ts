import { createRequire } from 'node:module';

/**
 * usearch loaded through its CommonJS build. Its ES module build finds the native binding from a stack
 * trace (`bindings`' getFileName), which inside a guarded worker (started from an eval script, see
 * core/egress/worker-guard.ts) names no file, and the lookup never returns; the CommonJS build finds it
 * from its own `__dirname`, wherever it runs.
 */
const usearch = createRequire(import.meta.url)('usearch') as typeof import('usearch');

export const { Index, MetricKind, ScalarKind, exactSearch } = usearch;
export type Index = import('usearch').Index;
export type Matches = import('usearch').Matches;
export type MetricKind = import('usearch').MetricKind;
export type ScalarKind = import('usearch').ScalarKind;
