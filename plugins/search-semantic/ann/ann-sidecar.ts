import { readFileSync } from 'node:fs';
import type { AnnQuantization } from './ann-index.js';

/**
 * The sidecar is the commit point of a save: it names the graph file it belongs to, so a crash after
 * the graph file is written but before the sidecar leaves the old pair intact (the new graph file is an
 * orphan, removed at the next open). It also holds what the graph file cannot say about itself.
 */
export interface AnnSidecar {
  readonly format: 1;
  /** File name (not path) of the graph in the same folder. */
  readonly file: string;
  /** Size in bytes of that file when it was saved: a shorter or longer file is not the one saved. */
  readonly bytes: number;
  /** Number of vectors in it. */
  readonly count: number;
  readonly watermark: number;
  readonly dimensions: number;
  readonly quantization: AnnQuantization;
  readonly connectivity: number;
  readonly model: string | null;
}

export type SidecarRead = { ok: true; sidecar: AnnSidecar } | { ok: false; reason: string };

/** What the saved index must match to be used; anything else is a reason to rebuild. */
export interface SidecarExpectation {
  readonly dimensions: number;
  readonly quantization: AnnQuantization;
  readonly connectivity: number;
  readonly model: string | null;
}

export function readSidecar(path: string, expected: SidecarExpectation): SidecarRead {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no saved index' : `the index sidecar cannot be read (${code ?? String(error)})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'the index sidecar is not valid JSON (damaged)' };
  }
  const sidecar = asSidecar(value);
  if (!sidecar) return { ok: false, reason: 'the index sidecar has an unknown format' };
  const mismatch = differences(sidecar, expected);
  return mismatch ? { ok: false, reason: `the saved index was made with ${mismatch}` } : { ok: true, sidecar };
}

function differences(saved: AnnSidecar, expected: SidecarExpectation): string | undefined {
  for (const field of ['dimensions', 'quantization', 'connectivity', 'model'] as const) {
    if (saved[field] !== expected[field]) {
      return `${field} ${JSON.stringify(saved[field])}, not ${JSON.stringify(expected[field])}`;
    }
  }
  return undefined;
}

function asSidecar(value: unknown): AnnSidecar | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (v.format !== 1 || typeof v.file !== 'string' || !/^[^/\\]+\.usearch$/.test(v.file)) return undefined;
  if (!isCount(v.bytes) || !isCount(v.count) || !isCount(v.watermark) || !isCount(v.dimensions) || !isCount(v.connectivity)) return undefined;
  if (v.quantization !== 'f32' && v.quantization !== 'f16' && v.quantization !== 'i8') return undefined;
  if (v.model !== null && typeof v.model !== 'string') return undefined;
  return v as unknown as AnnSidecar;
}
