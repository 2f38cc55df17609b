import { join } from 'node:path';
import type { Kernel } from '../kernel.js';
import { DEFAULT_RETRY } from './retry-policy.js';
import { SNAPSHOT_SERVICE, type SnapshotService } from './snapshot-service.js';
import type { TurnDependencies } from './turn-loop.js';

export const DEFAULT_TURN_SETTINGS: TurnDependencies['settings'] = { maxToolRounds: 25, requireSnapshot: true, confirmTimeoutMs: 10 * 60_000, idleTimeoutMs: 120_000, retry: DEFAULT_RETRY };

/** What the turn loop needs from a kernel; the snapshot service is looked up per turn (a plugin provides it). */
export function turnDependencies(kernel: Kernel, settings: Partial<TurnDependencies['settings']> = {}, model: { contextLimit?: number; maxOutputTokens?: number } = {}): TurnDependencies {
  return {
    sessions: kernel.sessions,
    questions: kernel.turns.questions,
    pipeline: kernel.pipeline,
    registry: kernel.registry,
    confirmations: kernel.confirmations,
    denyRules: kernel.config.gate.deny,
    snapshots: () => kernel.container.isRegistered(SNAPSHOT_SERVICE, true) ? kernel.container.resolve<SnapshotService>(SNAPSHOT_SERVICE) : undefined,
    sessionsDir: join(kernel.workspace.agentDir, 'sessions'),
    log: kernel.log,
    // Defaults, then the model's own configuration, then quire.json's agent section, then the caller (tests).
    settings: { ...DEFAULT_TURN_SETTINGS, ...withoutUndefined(model), ...withoutUndefined(kernel.config.agent), ...settings },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
