import { ConflictError, KernelError } from '../errors.js';
import type { Kernel } from '../kernel.js';
import { KERNEL_VERSION } from '../paths.js';
import { turnDependencies } from './kernel-turns.js';
import type { ModelProvider } from './model-provider.js';
import { MODEL_PROVIDER } from './model-provider-token.js';
import { guardModelEgress, modelEffects, type EgressPolicy } from './egress-filter.js';
import { localOnlyNotebooks, notebookNames } from '../gate/egress-scope.js';
import { QUESTION_TOOL, QuestionBoard } from './questions.js';
import { SKILLS_LISTING, type SkillListing, type SkillsListingSource } from './skills-listing.js';
import { buildSystemPrompt, readAgentsFile } from './system-prompt.js';
import type { TurnEvent } from './turn-events.js';
import { runTurn, toolSpecs, type TurnOutcome } from './turn-loop.js';
import { previewRequest } from './request-preview.js';
import { meteredProvider, type BudgetOverrun } from '../usage/metered-provider.js';
import { askToExceedBudget } from './budget-question.js';
import { estimateRequest } from './compaction-tokens.js';
import { toModelMessages } from './model-messages.js';

/** What a cancel found: whether a turn ran, and the tool calls it had started without a result yet. */
export type CancelAnswer =
  | { cancelled: false; reason?: 'rollback' | 'another_turn'; turnID?: string }
  | { cancelled: true; turnID?: string; running: { toolCalls: { id: string; name: string }[] } };

/** A session's running turn (or an exclusive hold, which has no turn id and no calls). */
interface RunningTurn {
  controller: AbortController;
  turnID?: string;
  /** An exclusive hold (a rollback), not a turn: a cancel does not stop it. */
  hold?: true;
  /** Calls announced (tool_call) and not answered yet (tool_result), by id. */
  calls: Map<string, string>;
}

/** How long asking the model's server whether the model exists may take before a turn starts. */
const PREPARE_TIMEOUT_MS = 15_000;
/** A prepared turn not run within this long lets its session go (its surface went away before starting it). */
const UNCLAIMED_MS = 60_000;

/** A session's turn taken and its model checked, not begun: `run` begins it, `release` lets it go. */
export interface PreparedTurn {
  run(message: string, emit: (event: TurnEvent) => void, messageId?: string): Promise<TurnOutcome>;
  release(): void;
}

function stoppedFirst(sessionId: string): KernelError {
  return new KernelError('ACTION_CANCELLED', 'the turn was stopped before it began: nothing was sent to the model', { details: { sessionId } });
}

/**
 * Starts turns for the HTTP surface: one turn at a time per session, each with its own AbortController
 * so that a person can cancel it. The model provider is whatever the providers plugin offers.
 */
export class TurnRunner {
  private readonly running = new Map<string, RunningTurn>();
  /** Settles when each running turn (or exclusive hold) has ended and saved what it ends with. */
  private readonly endings = new Set<Promise<void>>();
  /** Questions the agent asked and the person has not answered yet. */
  readonly questions = new QuestionBoard();

  constructor(private readonly kernel: Kernel) {}

  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /**
   * Throws what would stop a turn from starting (one already running, no model, a model that is not
   * configured right), before any stream opens.
   */
  async check(sessionId: string): Promise<void> {
    if (this.running.has(sessionId)) throw this.busy(sessionId);
    await this.provider().prepare?.(AbortSignal.timeout(PREPARE_TIMEOUT_MS));
  }

  async start(sessionId: string, message: string, emit: (event: TurnEvent) => void): Promise<TurnOutcome> {
    return (await this.prepare(sessionId)).run(message, emit);
  }

  /**
   * Takes the session's turn and checks the model (up to 15 s the first time), for a surface that must
   * answer a refusal before it opens a stream: the turn is registered from the start, so that a Stop
   * during the check, or between it and `run`, reaches it (it was registered only once the stream had
   * opened, and a Stop before answered {cancelled: false} while the turn then ran). Stopped during the
   * check, it throws ACTION_CANCELLED; not run within a minute, the session is let go.
   */
  async prepare(sessionId: string): Promise<PreparedTurn> {
    if (this.running.has(sessionId)) throw this.busy(sessionId);
    const live: RunningTurn = { controller: new AbortController(), calls: new Map() };
    this.running.set(sessionId, live);
    const ended = this.ending();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(unclaimed);
      if (this.running.get(sessionId) === live) this.running.delete(sessionId);
      ended();
    };
    const unclaimed = setTimeout(release, UNCLAIMED_MS);
    unclaimed.unref();
    try {
      await Promise.resolve(this.provider().prepare?.(AbortSignal.any([live.controller.signal, AbortSignal.timeout(PREPARE_TIMEOUT_MS)])))
        .catch((error: unknown) => { throw live.controller.signal.aborted ? stoppedFirst(sessionId) : error; });
      if (live.controller.signal.aborted) throw stoppedFirst(sessionId);
    } catch (error) {
      release();
      throw error;
    }
    // Stopped (a Stop, the kernel closing) before it is run: let go at once (close waited its whole grace).
    let begun = false;
    live.controller.signal.addEventListener('abort', () => { if (!begun) release(); }, { once: true });
    return {
      run: async (message, emit, messageId) => {
        begun = true;
        try {
          if (released) throw new KernelError('ACTION_CANCELLED', 'the turn was let go before it began: nothing was sent to the model', { details: { sessionId } });
          clearTimeout(unclaimed);
          if (live.controller.signal.aborted) throw stoppedFirst(sessionId);
          return await this.runPrepared(sessionId, live, message, emit, messageId);
        } finally {
          release();
        }
      },
      release,
    };
  }

  private async runPrepared(sessionId: string, live: RunningTurn, message: string, emit: (event: TurnEvent) => void, messageId?: string): Promise<TurnOutcome> {
    let turnId: string | undefined;
    const { provider, egress } = this.guardedProvider(emit, () => turnId, sessionId, live.controller.signal);
    const { kernel } = this;
    const agentsFile = await readAgentsFile(kernel.workspace.root);
    const skills = await this.skills();
    return await runTurn(turnDependencies(kernel, {}, provider.limits), {
      sessionId, message, ...(messageId !== undefined ? { messageId } : {}), provider, egress, signal: live.controller.signal,
      systemPrompt: (tools) => buildSystemPrompt({ workspaceRoot: kernel.workspace.root, kernelVersion: KERNEL_VERSION, now: new Date(), tools, skills }, agentsFile),
    }, (event) => {
      if (event.type === 'turn') turnId = event.turnID;
      track(live, event);
      // The turn's running cost, from the ledger (every request of the turn, compaction and retries included).
      emit(event.type === 'usage' && turnId !== undefined ? { ...event, cost: kernel.usage.total({ sessionId, turnId }).cost } : event);
    });
  }

  /**
   * Stops every running turn (each ends interrupted, its draft kept, as a person's cancel does) and waits
   * at most `graceMs` for them to end: the kernel closes the session store after, and a turn saving
   * into it after its close would write into a workspace that is being let go.
   */
  async close(graceMs: number): Promise<void> {
    for (const live of this.running.values()) live.controller.abort();
    if (this.endings.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.endings), new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); })]);
    clearTimeout(timer);
  }

  /** Registers a turn or hold under way; the function returned says it has ended. */
  private ending(): () => void {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => { end = resolve; });
    this.endings.add(ended);
    return () => {
      this.endings.delete(ended);
      end();
    };
  }

  /** What the next request of a turn with this message would send, without calling the model. */
  async preview(sessionId: string, message: string): Promise<ReturnType<typeof previewRequest>> {
    const { kernel } = this;
    const session = await kernel.sessions.read(sessionId);
    const provider = this.provider();
    const { egress } = this.guardedProvider(() => undefined);
    const settings = turnDependencies(kernel, {}, provider.limits).settings;
    const tools = [...toolSpecs(kernel.registry, kernel.config.gate.deny), QUESTION_TOOL];
    const agentsFile = await readAgentsFile(kernel.workspace.root);
    const skills = await this.skills();
    return previewRequest({
      provider, policy: egress, tools, history: toModelMessages(session.entries), message,
      system: buildSystemPrompt({ workspaceRoot: kernel.workspace.root, kernelVersion: KERNEL_VERSION, now: new Date(), tools, skills }, agentsFile),
      ...(settings.maxOutputTokens !== undefined ? { maxOutputTokens: settings.maxOutputTokens } : {}),
      ...(settings.contextLimit !== undefined ? { contextLimit: settings.contextLimit } : {}),
      ...(kernel.config.usage.prices[provider.model ?? provider.id] ? { price: kernel.config.usage.prices[provider.model ?? provider.id]! } : {}),
    });
  }

  /** Throws, saying why, while the session runs a turn or undoes one (a deletion waits for neither). */
  assertIdle(sessionId: string): void {
    if (this.running.has(sessionId)) throw this.busy(sessionId);
  }

  /** Why nothing new may start in the session: a turn runs, or one of its turns is being undone. */
  private busy(sessionId: string): ConflictError {
    return this.running.get(sessionId)?.hold === true
      ? new ConflictError('CONFLICT', `session ${sessionId} is undoing a turn; try again once that is done`, { details: { reason: 'rollback' } })
      : new ConflictError('CONFLICT', `session ${sessionId} is already running a turn`, { details: { reason: 'running' } });
  }

  /**
   * Runs `work` while the session counts as running a turn, so that no turn starts under it (an undo
   * must not race the agent's next writes); refused with CONFLICT while a turn runs.
   */
  async exclusive<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    if (this.running.has(sessionId)) throw this.busy(sessionId);
    this.running.set(sessionId, { controller: new AbortController(), calls: new Map(), hold: true });
    const ended = this.ending();
    try {
      return await work();
    } finally {
      this.running.delete(sessionId);
      ended();
    }
  }

  /** Stops a session's turn; it ends interrupted, its draft kept. */
  cancel(sessionId: string): boolean {
    return this.cancelTurn(sessionId).cancelled;
  }

  /**
   * Stops a session's turn and says what was still running: the calls it had started (a running one
   * gets its signal aborted and ends result-unknown, one waiting for the person is closed).
   */
  cancelTurn(sessionId: string, onlyTurn?: string): CancelAnswer {
    const live = this.running.get(sessionId);
    if (!live) return { cancelled: false };
    // A hold (a rollback running) has no turn, and its work heeds no signal: it was told cancelled, and went on.
    if (live.hold === true) return { cancelled: false, reason: 'rollback' };
    // A client that names its turn stops only that one: the session's running turn may be another client's.
    if (onlyTurn !== undefined && live.turnID !== onlyTurn) return { cancelled: false, reason: 'another_turn', ...(live.turnID !== undefined ? { turnID: live.turnID } : {}) };
    const toolCalls = [...live.calls].map(([id, name]) => ({ id, name }));
    live.controller.abort();
    return { cancelled: true, ...(live.turnID !== undefined ? { turnID: live.turnID } : {}), running: { toolCalls } };
  }

  /**
   * The skills listed in this turn's prompt, read once per turn (a skill saved during the turn is listed
   * from the next one). A listing that fails to read leaves the skills out rather than failing the turn.
   */
  private async skills(): Promise<readonly SkillListing[]> {
    const { container, log } = this.kernel;
    if (!container.isRegistered(SKILLS_LISTING, true)) return [];
    try {
      return await container.resolve<SkillsListingSource>(SKILLS_LISTING).promptListing();
    } catch (error) {
      log.warn('the skills listing could not be read; this turn lists no skills', { error: error instanceof Error ? error.message : String(error) });
      return [];
    }
  }

  /**
   * The provider as this turn uses it: when its manifest entry declares dataEgress, every request goes
   * without the tool results drawn from local-only notebooks (core/turn/egress-filter.ts).
   */
  private guardedProvider(emit: (event: TurnEvent) => void, turnId: () => string | undefined = () => undefined, sessionId = '', signal?: AbortSignal): { provider: ModelProvider; egress: EgressPolicy } {
    const raw = this.provider();
    const { container, plugins, config } = this.kernel;
    const settings = turnDependencies(this.kernel, {}, raw.limits).settings;
    // Metered inside the egress guard: the budget sees the request as it will be sent.
    const provider = meteredProvider(raw, {
      ledger: this.kernel.usage, budgets: config.budgets, prices: () => config.usage.prices, sessionId, turnId,
      estimate: (request) => estimateRequest(request.messages, request.tools, false),
      ...(settings.maxOutputTokens !== undefined ? { maxOutputTokens: settings.maxOutputTokens } : {}),
      ...(config.budgets.whenExceeded === 'ask' && signal ? {
        askToExceed: (overrun: BudgetOverrun) => askToExceedBudget({ confirmations: this.kernel.confirmations, emit, sessionId, turnId: turnId() ?? '', confirmTimeoutMs: settings.confirmTimeoutMs, signal }, overrun),
      } : {}),
    });
    const policy: EgressPolicy = {
      egress: modelEffects(plugins.activeProviderOf('agent.model'), raw).includes('dataEgress'),
      to: `${provider.id}${provider.model ? ` (${provider.model})` : ''}`,
      localOnly: () => localOnlyNotebooks(container),
      names: () => notebookNames(container),
      onWithheld: (count, answers) => emit({ type: 'withheld', count, ...(answers > 0 ? { answers } : {}), reason: 'local-only' }),
    };
    return { provider: guardModelEgress(provider, policy), egress: policy };
  }

  private provider(): ModelProvider {
    const { container } = this.kernel;
    if (!container.isRegistered(MODEL_PROVIDER, true)) throw new KernelError('MODEL_UNAVAILABLE', 'No model provider is configured; enable the providers plugin and set one in quire.json');
    return container.resolve<ModelProvider>(MODEL_PROVIDER);
  }
}

/** Keeps a running turn's id and its unanswered calls up to date from the events it emits. */
function track(live: RunningTurn, event: TurnEvent): void {
  if (event.type === 'turn') live.turnID = event.turnID;
  else if (event.type === 'tool_call') live.calls.set(event.toolCallID, event.name);
  else if (event.type === 'tool_result') live.calls.delete(event.toolCallID);
}
