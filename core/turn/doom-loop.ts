/**
 * The doom-loop tracker (REFERENCE.md §5): failed calls with the same signature are counted; at the
 * warning threshold the model is told to change approach, at the stop threshold the turn ends. A
 * success resets the count. Quire warns whenever the count reaches or passes the threshold, not only
 * when it equals it (REFERENCE.md, departures).
 */
export const WARN_AT = 3;
export const STOP_AT = 5;

/** Arguments that identify what a call is about, per tool; content-like arguments never count. */
const IDENTIFYING: ReadonlyMap<string, readonly string[]> = new Map([
  ['block', ['id', 'ids', 'parentId', 'previousId', 'nextId']],
  ['document', ['id', 'path', 'notebook', 'parentId']],
  ['notebook', ['id']],
  ['attr', ['id']],
  ['sql', ['sql']],
  ['search', ['query', 'notebooks', 'path']],
  ['todo', ['todos']],
  // A skill's files are told apart by `file` (its kept versions by `version`): failed loads of different files are different calls.
  ['skill', ['name', 'file', 'newName', 'path', 'url', 'version']],
]);
const DEFAULT_KEYS: readonly string[] = ['id', 'ids', 'path', 'name', 'query', 'url'];
const VALUE_LENGTH = 64;

export interface CallOutcome {
  tool: string;
  action: string;
  input: Readonly<Record<string, unknown>>;
  /** False for an error result, and for an empty or blank one. */
  succeeded: boolean;
}

export type DoomVerdict =
  | { kind: 'ok' }
  | { kind: 'warn'; count: number; message: string }
  | { kind: 'stop'; count: number; message: string };

export function callSignature(call: Pick<CallOutcome, 'tool' | 'action' | 'input'>): string {
  const keys = IDENTIFYING.get(call.tool) ?? DEFAULT_KEYS;
  const values = keys.filter((key) => call.input[key] !== undefined).map((key) => `${key}=${JSON.stringify(call.input[key]).slice(0, VALUE_LENGTH)}`);
  return `${call.tool}.${call.action}(${values.join(',')})`;
}

export class DoomLoopTracker {
  private signature = '';
  private count = 0;

  /** Records one call and says whether the model should be warned or the turn stopped. */
  record(call: CallOutcome): DoomVerdict {
    if (call.succeeded) {
      this.signature = '';
      this.count = 0;
      return { kind: 'ok' };
    }
    const signature = callSignature(call);
    this.count = signature === this.signature ? this.count + 1 : 1;
    this.signature = signature;
    const name = `${call.tool}_${call.action}`;
    if (this.count >= STOP_AT) return { kind: 'stop', count: this.count, message: `Repetitive tool calls detected: '${name}' called ${this.count} times with the same action. Operation terminated.` };
    if (this.count >= WARN_AT) return { kind: 'warn', count: this.count, message: `You have called '${name}' ${this.count} times with the same arguments and it failed each time. Change your approach instead of repeating it.` };
    return { kind: 'ok' };
  }
}
