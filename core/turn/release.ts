import { hashArguments } from '../canonical-json.js';
import type { ConfirmationStore } from '../gate/confirmation-store.js';
import type { ToolCallRecord } from '../session/session-types.js';
import type { EgressPolicy } from './egress-filter.js';
import { linkedController } from './linked-signal.js';
import { notebooksOfRecord } from './model-messages.js';
import type { TurnEvent } from './turn-events.js';

/** How much of a result the person is shown in the question (the whole text stays in the session). */
const PREVIEW_CHARS = 4_000;

export interface ReleaseContext {
  policy: EgressPolicy;
  ask: boolean;
  confirmations: ConfirmationStore;
  sessionId: string;
  turnId: string;
  roundId: string;
  confirmTimeoutMs: number;
  signal: AbortSignal;
  emit: (event: TurnEvent) => void;
  checkpoint: () => Promise<void>;
}

/**
 * Before a round's results go to a model off this machine: each one holding notes of local-only
 * notebooks (or unable to say whose notes it holds) is put to the person, showing the tool, the
 * notebooks, the server and the text. Approved, it is sent as it is, now and in later requests;
 * declined, unanswered or when the setting is `withhold`, a marker goes in its place
 * (egress-filter.ts). The answer is kept on the call in the session.
 */
export async function askToRelease(context: ReleaseContext, records: ToolCallRecord[]): Promise<void> {
  const { policy } = context;
  if (!policy.egress || !context.ask) return;
  const localOnly = policy.localOnly();
  if (localOnly.size === 0) return;
  for (const record of records) {
    if (record.released !== undefined || context.signal.aborted) continue;
    const notebooks = notebooksOfRecord(record.notebooks);
    const held = notebooks === 'all' ? [...localOnly] : notebooks.filter((notebook) => localOnly.has(notebook));
    if (held.length === 0) continue;
    record.released = await ask(context, record, held, notebooks === 'all');
    await context.checkpoint();
  }
}

async function ask(context: ReleaseContext, record: ToolCallRecord, held: string[], unknown: boolean): Promise<boolean> {
  const names = context.policy.names();
  const text = record.result ?? '';
  const args = {
    toolCallId: record.id, tool: record.name, to: context.policy.to,
    notebooks: held.map((id) => ({ id, name: names.get(id) ?? id })),
    ...(unknown ? { note: 'the tool cannot say whose notes its result holds, so it counts as holding every local-only notebook' } : {}),
    characters: text.length, text: text.slice(0, PREVIEW_CHARS), ...(text.length > PREVIEW_CHARS ? { truncated: true } : {}),
  };
  const confirmation = await context.confirmations.create({
    kind: 'release', plugin: 'kernel', tool: 'egress', action: 'release', wireName: 'release_to_model',
    arguments: args, argsHash: hashArguments(args), effects: ['dataEgress'], destructive: false,
    principal: `agent:${context.sessionId}/${context.turnId}/${record.id}`, sessionId: context.sessionId, turnId: context.turnId,
  });
  context.emit({ type: 'confirm', roundID: context.roundId, confirmation });
  const waiting = linkedController(context.signal, context.confirmTimeoutMs > 0 ? context.confirmTimeoutMs : undefined);
  const waited = await context.confirmations.waitForAnswer(confirmation.id, waiting.signal).catch(() => undefined).finally(() => waiting.unlink());
  const answered = waited ?? await context.confirmations.expire(confirmation.id);
  return answered.status === 'approved' && !context.signal.aborted;
}
