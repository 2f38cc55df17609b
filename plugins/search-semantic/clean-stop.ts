import { createHash } from 'node:crypto';
import { DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, type IgnoreConfig } from './config.js';
import type { EmbeddingStore } from './embedding-store.js';

/**
 * What a clean stop leaves in the store so that the next start can skip comparing every block with it
 * (at 1M blocks a read of the whole notes index: 8-17 s warm, 35-38 s from a cold disk, competing with
 * the rest of the start for the disk and the event loop). It holds:
 *   - the blocks' change mark (BlocksIndex.changeMark) once every change reported before it was taken
 *     in and no comparison was owed;
 *   - a fingerprint of everything else the intake's verdicts depend on.
 * The start takes it out of the store durably before anything else, so a crash leaves no mark and the
 * next start compares; equal mark and fingerprint mean the comparison would change no row.
 */
export const CLEAN_STOP_KEY = 'clean-stop';

/** Bumped when the intake's rules change in code (what is ignored, how a text is hashed). */
const INTAKE_RULES_VERSION = 1;

export interface IntakeInputs {
  model: string;
  remote: boolean;
  ignore: IgnoreConfig | undefined;
  localOnly: ReadonlySet<string>;
}

export function intakeFingerprint(inputs: IntakeInputs): string {
  const ignore = inputs.ignore ?? {};
  const canonical = JSON.stringify({
    rules: INTAKE_RULES_VERSION,
    model: inputs.model,
    remote: inputs.remote,
    paths: ignore.paths ?? [],
    types: [...(ignore.types ?? [])].sort(),
    minChars: ignore.minChars ?? DEFAULT_MIN_CHARS,
    maxChars: ignore.maxChars ?? DEFAULT_MAX_CHARS,
    localOnly: [...inputs.localOnly].sort(),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

export function recordCleanStop(store: EmbeddingStore, mark: string, fingerprint: string): void {
  store.setMeta(CLEAN_STOP_KEY, JSON.stringify({ mark, fingerprint }));
}

/**
 * Whether the last stop was clean and nothing the comparison looks at has changed since. Removes the
 * record whatever the answer: it vouches for one start only.
 */
export function unchangedSinceCleanStop(store: EmbeddingStore, mark: string, fingerprint: string): boolean {
  const recorded = store.takeMeta(CLEAN_STOP_KEY);
  if (recorded === undefined) return false;
  try {
    const parsed = JSON.parse(recorded) as { mark?: unknown; fingerprint?: unknown };
    return parsed.mark === mark && parsed.fingerprint === fingerprint;
  } catch {
    return false;
  }
}
