import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkHooks } from './snapshot-types.js';
import { localOnlyAmong } from '../../core/index.js';
import { showsToReaders, type Access } from '../blocks/notebook-conf.js';

/**
 * A notebook's privacy in its `.notebook.json`: who reads it (`access`), whether its text may leave this
 * machine (`egress`), what the agent may do there (`agent`). Only a person sets them (the actions are
 * personOnly), so an undo of the agent's turn never takes them back: a notebook a person made
 * local-only while the turn ran was made shareable again by restoring the turn's first snapshot.
 */
const PRIVACY = ['access', 'egress', 'agent'] as const;

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

export const isNotebookSettings = (path: string): boolean => path.endsWith('/.notebook.json');

/** A `.notebook.json` as written back, every field it holds kept (notebookConfText would drop those it does not know). */
const settingsText = (settings: Record<string, unknown>): string => `${JSON.stringify(settings, null, 2)}\n`;

/** `old` with these fields as `current` has them (left out where it has none). */
function withFieldsOf(old: Record<string, unknown>, current: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const next: Record<string, unknown> = { ...old };
  for (const field of fields) {
    if (current[field] === undefined) delete next[field];
    else next[field] = current[field];
  }
  return next;
}

/** Whether the privacy differs between two versions of a `.notebook.json`. */
export function privacyDiffers(before: string, after: string): boolean {
  const [a, b] = [parse(before), parse(after)];
  return a === undefined || b === undefined || PRIVACY.some((field) => a[field] !== b[field]);
}

/**
 * A turn's undo of a notebook's settings: a setting both the turn and someone else changed, while it ran
 * or since, is a conflict (left as it is unless forced: the person's value is not known, only the one before the
 * turn); otherwise the text undoneKeepingPrivacy gives, keeping what others changed.
 */
export function undoSettings(before: string, after: string, now: string, notes: { settingsByOthers?: Record<string, string[]>; settingsByTurn?: Record<string, string[]> }, path: string, force: boolean): { conflict: boolean; text?: string } {
  const others = notes.settingsByOthers?.[path] ?? [];
  const mine = notes.settingsByTurn?.[path] ?? [];
  const both = others.filter((field) => mine.includes(field));
  // A setting the turn changed that is not as the turn left it (a person renamed the notebook after the turn): theirs too.
  const [left, current] = [parse(after), parse(now)];
  const since = mine.filter((field) => left === undefined || current === undefined || JSON.stringify(left[field]) !== JSON.stringify(current[field]));
  if ((both.length > 0 || since.length > 0) && !force) return { conflict: true };
  const text = undoneKeepingPrivacy(before, now, others.filter((field) => !both.includes(field)));
  return text === undefined ? { conflict: false } : { conflict: false, text };
}

/**
 * The settings the undo writes: the version before the turn (its name, icon, order) with the privacy,
 * and the fields someone else changed while the turn ran (a person's rename), as they are now;
 * undefined when that is what is there already (or a version cannot be read).
 */
export function undoneKeepingPrivacy(before: string, now: string, changedByOthers: readonly string[] = []): string | undefined {
  const [old, current] = [parse(before), parse(now)];
  if (old === undefined || current === undefined) return undefined;
  const next = withFieldsOf(old, current, [...PRIVACY, ...changedByOthers]);
  const text = settingsText(next);
  return JSON.stringify(next) === JSON.stringify(current) ? undefined : text;
}

/** Each privacy setting from the closed end: the agent's reach, narrowest first; absent is the default. */
const AGENT_ORDER = ['none', 'read', 'write'];
function stricter(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (a.access !== undefined || b.access !== undefined) out.access = showsToReaders(a.access as Access | undefined) && showsToReaders(b.access as Access | undefined) ? a.access : 'private';
  // Core's answer of what is local-only (one place: scopes-in-one-place.test.ts).
  if (localOnlyAmong([['a', a], ['b', b]]).size > 0) out.egress = 'local-only';
  const agent = [a.agent, b.agent].map((value) => (typeof value === 'string' && AGENT_ORDER.includes(value) ? value : 'write')).sort((x, y) => AGENT_ORDER.indexOf(x) - AGENT_ORDER.indexOf(y))[0]!;
  if (agent !== 'write') out.agent = agent;
  return out;
}

/**
 * A notebook's settings as a rollback by someone other than a person writes them: the snapshot's, each
 * privacy setting the stricter of the snapshot's and the current one (only a person opens a notebook up:
 * a rollback to an older snapshot made a notebook the person had since closed published again, and one
 * to a snapshot of text written while private brought it back into a notebook the person had since
 * opened); a notebook the rollback brings back is never published by it. Undefined: the snapshot's text.
 */
export function withPrivacyKept(snapshot: string, now: string | undefined): string | undefined {
  const old = parse(snapshot);
  if (old === undefined) return undefined;
  const current = now === undefined ? undefined : parse(now);
  const next = current !== undefined ? withFieldsOf(old, stricter(old, current), PRIVACY) : { ...old };
  if (current === undefined && showsToReaders(old.access as Access | undefined)) next.access = 'private';
  return settingsText(next);
}

/**
 * A notebook's settings as a turn's undo restoring its first snapshot writes them: the privacy as it is
 * now (a person's, set while the turn ran); a notebook the turn removed comes back as it was.
 */
function withCurrentPrivacy(snapshot: string, now: string | undefined): string | undefined {
  const [old, current] = [parse(snapshot), now === undefined ? undefined : parse(now)];
  return old === undefined || current === undefined ? undefined : settingsText(withFieldsOf(old, current, PRIVACY));
}

/**
 * Rollback hooks that write every notebook's privacy as withPrivacyKept says (`rollback`: someone other
 * than a person rolls back), or as it is now (`undo`: a turn's undo).
 */
export function keepingPrivacy(dataDir: string, kind: 'rollback' | 'undo', hooks: WorkHooks = {}): WorkHooks {
  return {
    ...hooks,
    writeAs: async (path, snapshotText) => {
      if (!isNotebookSettings(path)) return undefined;
      const now = await readFile(join(dataDir, ...path.split('/')), 'utf8').catch(() => undefined);
      return (kind === 'rollback' ? withPrivacyKept : withCurrentPrivacy)((await snapshotText()).toString('utf8'), now);
    },
  };
}
