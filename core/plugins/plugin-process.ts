import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Duplex, Readable } from 'node:stream';
import { currentAction, runInActionScope } from '../egress/action-scope.js';
import { KernelError, PluginError, isKernelError } from '../errors.js';
import type { Logger, LogLevel } from '../log.js';
import type { ActionCall } from '../plugin-api.js';
import { childHostScript, createScratch, planSandbox, removeScratch, type SandboxInfo } from './child-sandbox.js';
import type { ChildMessage, HandlerShape, KernelMessage, WireAction } from './plugin-ipc.js';
import { toWireError } from './plugin-ipc.js';
import { FramedChannel } from './framed-channel.js';
import { LogBudget, boundedFields } from './log-budget.js';
import { fromWireError, RemoteCalls } from './remote-calls.js';
import type { CapabilityBroker } from './remote-capabilities.js';

export interface PluginProcessOptions {
  pluginId: string;
  entryPath: string;
  pluginDir: string;
  config: Record<string, unknown>;
  requires: string[];
  provides: string[];
  actions: WireAction[];
  capabilities: CapabilityBroker;
  activationTimeoutMs: number;
  stopGraceMs: number;
  /** The configured limit of a call to this action, sent to the child as its deadline (the kernel enforces the real one). */
  timeoutOf(tool: string, action: string): number;
  log: Logger;
  onProvide(name: string, value: unknown): void;
}

export type ProcessState = 'starting' | 'running' | 'restarting' | 'stopped';

/** How a plugin's process is doing, for GET /api/plugins. */
export interface ProcessStatus {
  state: ProcessState;
  pid?: number;
  restarts: number;
  sandbox?: SandboxInfo;
  lastExit?: { code: number | null; signal: string | null; reason: string; at: string };
  /** After a crash, when the next start is due (ISO time). */
  nextStartAt?: string;
}

const MAX_BACKOFF_MS = 30_000;
const FIRST_BACKOFF_MS = 250;
/** Up this long, a process that ends counts as a first crash again: the backoff starts over. */
const STABLE_MS = 30_000;
const DISPOSE_GRACE_MS = 3_000;
const MAX_LOG_CHARS = 4_000;

/**
 * One untrusted plugin in a process of its own (DESIGN.md §1, plugin isolation). Its time limits are
 * enforced by ending the process, its crashes end only the process (its calls fail with PLUGIN_ERROR and
 * it is started again, with backoff), and it reaches the kernel only through plugin-ipc.ts messages.
 */
export class PluginProcess {
  private child: ChildProcess | undefined;
  /** The message pipe of the current child. */
  private channel: FramedChannel | undefined;
  /** Why the current child was ended for what it wrote to its pipe. */
  private protocolBroken: string | undefined;
  private state: ProcessState = 'stopped';
  private restarts = 0;
  private crashesInARow = 0;
  /** What its process may write to the kernel's log, over all its restarts. */
  private readonly logBudget: LogBudget;
  /** When the running process finished activating. */
  private upSince: number | undefined;
  private lastExit: ProcessStatus['lastExit'];
  private nextStartAt: number | undefined;
  private sandbox: SandboxInfo | undefined;
  private scratch: string | undefined;
  private closing = false;
  private everActive = false;
  private endReason: string | undefined;
  private ready: Promise<void> = Promise.resolve();
  private restartTimer: NodeJS.Timeout | undefined;
  private activation: { resolve(shape: HandlerShape): void; reject(error: Error): void } | undefined;
  private readonly exits = new Set<() => void>();
  private readonly ended = new WeakSet<ChildProcess>();
  private readonly calls: RemoteCalls;

  constructor(private readonly options: PluginProcessOptions) {
    this.logBudget = new LogBudget(options.log);
    this.calls = new RemoteCalls({ send: (message) => this.send(message), endForStop: (why) => this.endForStop(why), stopGraceMs: options.stopGraceMs });
  }

  /** Starts the process and activates the plugin, within the activation limit; throws a PluginError (the process ended). */
  async start(): Promise<HandlerShape> {
    const shape = await this.launch();
    this.everActive = true;
    return shape;
  }

  status(): ProcessStatus {
    return {
      state: this.state, restarts: this.restarts,
      ...(this.child?.pid !== undefined && this.state !== 'stopped' ? { pid: this.child.pid } : {}),
      ...(this.sandbox ? { sandbox: this.sandbox } : {}),
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(this.nextStartAt !== undefined ? { nextStartAt: new Date(this.nextStartAt).toISOString() } : {}),
    };
  }

  /** Runs one call in the process; honours `call.signal` by a cancel, then by ending the process. */
  async call(tool: string, action: string, input: Record<string, unknown>, call: ActionCall): Promise<unknown> {
    const scope = currentAction();
    const { signal } = call;
    // Started again at once after a stop it had to be killed for: wait. Waiting out a crash's backoff: say so now.
    if (this.state === 'starting' || (this.state === 'restarting' && this.nextStartAt === undefined)) await untilReadyOrStopped(this.ready, signal);
    if (this.state !== 'running') throw this.unavailable();
    return this.calls.start({ tool, action, input, call, scope }, call, Date.now() + this.options.timeoutOf(tool, action));
  }

  /** Disposes the plugin in its process (bounded), then ends the process. Safe to call twice. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.exits.add(resolve));
      this.send({ type: 'dispose' });
      const timer = setTimeout(() => child.kill('SIGKILL'), DISPOSE_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    this.state = 'stopped';
    if (this.scratch) await removeScratch(this.scratch);
    this.scratch = undefined;
  }

  private unavailable(): KernelError {
    const retry = this.nextStartAt !== undefined ? Math.max(0, this.nextStartAt - Date.now()) : undefined;
    const why = this.closing ? 'its process has been stopped' : `its process is being restarted after it ended (${this.lastExit?.reason ?? 'unknown'})`;
    // Waiting for its restart clears by itself: 503 with when to try again (it was a 500, as for a failure of the plugin's).
    if (!this.closing && retry !== undefined) {
      return new KernelError('NOT_READY', `plugin '${this.options.pluginId}' cannot answer now: ${why}; try again in ${Math.ceil(retry / 1000)} s`, { details: { state: this.state, retryInMs: retry, retryAfterSeconds: Math.max(1, Math.ceil(retry / 1000)) } });
    }
    return new KernelError('PLUGIN_ERROR', `plugin '${this.options.pluginId}' cannot answer now: ${why}`, { details: { state: this.state, ...(retry !== undefined ? { retryInMs: retry } : {}) } });
  }

  private async launch(): Promise<HandlerShape> {
    const { options } = this;
    const host = childHostScript();
    if (!host) throw new PluginError('PLUGIN_LOAD_FAILED', options.pluginId, 'the plugin host process is not built (run npm run build)');
    // Made again when it is gone (a clean-up of the temporary folder): every restart would fail without it.
    if (this.scratch === undefined || !existsSync(this.scratch)) this.scratch = await createScratch(options.pluginId);
    const effects = new Set(options.actions.flatMap((action) => action.declaredEffects));
    const plan = planSandbox(host, { pluginDir: options.pluginDir, cwd: this.scratch, declaresEgress: effects.has('dataEgress'), declaresLocalWrite: effects.has('localWrite') });
    this.sandbox = plan.info;
    this.endReason = undefined;
    this.protocolBroken = undefined;
    this.state = 'starting';
    // Descriptor 3 is the message pipe (framed-channel.ts), not Node's IPC channel.
    const child = spawn(plan.command, plan.args, { cwd: plan.cwd, env: plan.env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.channel = new FramedChannel(child.stdio[3] as Duplex, {
      message: (message) => this.onMessage(child, message),
      protocolError: (error) => {
        this.options.log.warn('plugin process broke the message protocol; ending it', { plugin: options.pluginId, error: error.message });
        // A crash of its own making: ended, and started again like any crash.
        if (child === this.child) this.protocolBroken = `it broke the message protocol: ${error.message}`;
        child.kill('SIGKILL');
      },
      closed: () => undefined,
    });
    this.forwardOutput(child.stdout, 'stdout');
    this.forwardOutput(child.stderr, 'stderr');
    const activated = new Promise<HandlerShape>((resolve, reject) => { this.activation = { resolve, reject }; });
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    child.once('error', (error) => this.onSpawnError(child, error));
    this.send({
      type: 'activate', pluginId: options.pluginId, entryUrl: options.entryPath, config: options.config,
      requires: options.requires, provides: options.provides, actions: options.actions, capabilities: options.capabilities.offers(),
    });
    try {
      const shape = await withLimit(activated, options.activationTimeoutMs, () => new PluginError('PLUGIN_ACTIVATION_TIMEOUT', options.pluginId, `loading and activation did not finish within ${options.activationTimeoutMs} ms; its process was ended`));
      this.state = 'running';
      this.upSince = Date.now();
      return shape;
    } catch (error) {
      await this.end(child, 'activation did not succeed');
      throw error;
    } finally {
      this.activation = undefined;
    }
  }

  /**
   * Sends a message to the current child. Throws when it cannot be serialised or is over the channel's
   * limit, so that its sender answers that (a call's input, a capability's answer) instead of leaving
   * the other side waiting until a time limit.
   */
  private send(message: KernelMessage): void {
    const channel = this.channel;
    if (!channel?.open) return;
    channel.send(message, (error) => { if (error) this.options.log.debug('plugin process message not sent', { error: error.message }); });
  }

  private onMessage(child: ChildProcess, raw: unknown): void {
    if (child !== this.child || raw === null || typeof raw !== 'object') return;
    const message = raw as ChildMessage;
    if (this.calls.onMessage(message)) return;
    switch (message.type) {
      case 'activated': return this.activation?.resolve(message.handlers);
      case 'activation-failed': return this.activation?.reject(this.activationError(message.phase, fromWireError(message.error)));
      case 'log': return this.logFromChild(message.level, message.message, message.fields);
      case 'provide': return this.provide(message.name, message.value);
      case 'capability': return void this.answerCapability(message.id, message.name, message.method, message.args, message.callId);
      case 'refused': return this.refused(message.target, message.callId);
      default: return undefined;
    }
  }

  private activationError(phase: 'load' | 'activate', error: KernelError): PluginError {
    const id = this.options.pluginId;
    if (phase === 'load') return new PluginError('PLUGIN_LOAD_FAILED', id, `cannot load ${this.options.entryPath}: ${error.message}`, { cause: error });
    // The code comes from the plugin's process: only one its context raises is believed (a plugin must not
    // answer an admin's enable with 401, or with a code that has no status).
    if (error.code === 'CAPABILITY_DENIED') return new PluginError(error.code, id, error.message, { cause: error, details: error.details });
    return new PluginError('PLUGIN_ACTIVATION_FAILED', id, `activation failed: ${error.message}`, { cause: error });
  }

  private logFromChild(level: LogLevel, message: unknown, fields: unknown): void {
    if (!this.logBudget.take()) return;
    const log = this.options.log;
    const write = level === 'debug' || level === 'info' || level === 'warn' || level === 'error' ? log[level] : log.info;
    write(String(message).slice(0, MAX_LOG_CHARS), boundedFields(fields));
  }

  private provide(name: unknown, value: unknown): void {
    try {
      this.options.onProvide(String(name), value);
    } catch (error) {
      this.options.log.error('plugin provide refused', { capability: String(name), error: (error as Error).message });
    }
  }

  private refused(target: unknown, callId: number | undefined): void {
    const scope = callId === undefined ? undefined : this.calls.scopeOf(callId);
    if (scope) scope.onRefused('egress', String(target));
    else this.options.log.warn('egress refused outside any action', { target: String(target) });
  }

  private async answerCapability(id: number, name: string, method: string, args: unknown[], callId: number | undefined): Promise<void> {
    // Answered to the process that asked: ids start again in a process started since (after a kill).
    const child = this.child;
    const answer = (message: KernelMessage): void => {
      if (child === this.child) this.send(message);
    };
    const scope = callId === undefined ? undefined : this.calls.scopeOf(callId);
    const call = callId === undefined ? undefined : this.calls.callOf(callId);
    try {
      const invoke = (): Promise<unknown> => this.options.capabilities.invoke(String(name), String(method), args, call);
      const value = await (scope ? runInActionScope(scope, invoke) : invoke());
      answer(capabilityAnswer(id, value));
    } catch (error) {
      // The answer itself could not cross (too large): this says so instead.
      try {
        answer({ type: 'capability-result', id, error: toWireError(error, isKernelError) });
      } catch (unsent) {
        this.options.log.warn('plugin capability answer cannot be sent', { capability: String(name), error: (unsent as Error).message });
      }
    }
  }

  /**
   * The process's output, a log line per line, each cut to MAX_LOG_CHARS. What a line holds beyond that
   * is dropped as it arrives: output without a newline is never gathered whole (readline kept it all).
   */
  private forwardOutput(stream: Readable | null, name: 'stdout' | 'stderr'): void {
    if (!stream) return;
    stream.setEncoding('utf8');
    let line = '';
    const emit = (): void => {
      if (this.logBudget.take()) this.options.log.info('plugin output', { stream: name, line: line.replace(/\r$/, '') });
      line = '';
    };
    stream.on('data', (chunk: string) => {
      let from = 0;
      for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', from)) {
        line = (line + chunk.slice(from, end)).slice(0, MAX_LOG_CHARS);
        emit();
        from = end + 1;
      }
      if (from < chunk.length && line.length < MAX_LOG_CHARS) line = (line + chunk.slice(from)).slice(0, MAX_LOG_CHARS);
    });
    stream.on('end', () => { if (line !== '') emit(); });
  }

  /** A stopped call did not stop: the process goes, and comes back at once (not a crash, no backoff). */
  private endForStop(why: string): void {
    const child = this.child;
    if (!child || this.state !== 'running') return;
    this.endReason = why;
    this.state = 'restarting';
    this.ready = new Promise<void>((resolve) => this.exits.add(resolve)).then(() => this.readyAgain());
    child.kill('SIGKILL');
  }

  private async end(child: ChildProcess, why: string): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    this.endReason ??= why;
    const exited = new Promise<void>((resolve) => this.exits.add(resolve));
    child.kill('SIGKILL');
    await exited;
  }

  private onSpawnError(child: ChildProcess, error: Error): void {
    this.options.log.error('plugin process failed to start', { error: error.message });
    this.activation?.reject(new PluginError('PLUGIN_LOAD_FAILED', this.options.pluginId, `its process could not start: ${error.message}`));
    // No exit event follows a process that never started.
    if (child.pid === undefined) this.onExit(child, null, null);
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    // 'error' and 'exit' may both report one failed start.
    if (child !== this.child || this.ended.has(child)) return;
    this.ended.add(child);
    this.logBudget.flush();
    const reason = this.endReason ?? this.protocolBroken ?? (signal ? `ended by ${signal}` : `exited with code ${String(code)}`);
    this.lastExit = { code, signal, reason, at: new Date().toISOString() };
    this.calls.failAll(new KernelError('PLUGIN_ERROR', `plugin '${this.options.pluginId}' process ended during the call (${reason})`, { details: { exitCode: code, signal, stillRunning: false } }));
    this.activation?.reject(new PluginError('PLUGIN_ACTIVATION_FAILED', this.options.pluginId, `its process ended during activation (${reason})`));
    for (const resolve of [...this.exits]) resolve();
    this.exits.clear();
    if (this.closing || !this.everActive) {
      this.state = 'stopped';
      return;
    }
    if (this.endReason === undefined) {
      this.options.log.warn('plugin process ended; restarting it', { plugin: this.options.pluginId, reason });
      this.scheduleRestart();
    }
  }

  /**
   * After a crash: started again after 250 ms, doubling up to 30 s while it keeps failing. It keeps
   * failing until it has stayed up STABLE_MS: one that activated and died a moment later was started
   * again every 400 ms for ever (the count went back to zero at each activation).
   */
  private scheduleRestart(): void {
    if (this.upSince !== undefined && Date.now() - this.upSince >= STABLE_MS) this.crashesInARow = 0;
    this.upSince = undefined;
    this.crashesInARow += 1;
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.crashesInARow - 1));
    this.state = 'restarting';
    this.nextStartAt = Date.now() + delay;
    let started!: () => void;
    this.ready = new Promise<void>((resolve) => { started = resolve; });
    this.restartTimer = setTimeout(() => { void this.readyAgain().finally(started); }, delay);
    this.restartTimer.unref();
  }

  private async readyAgain(): Promise<void> {
    if (this.closing) return;
    this.nextStartAt = undefined;
    this.restarts += 1;
    try {
      await this.launch();
    } catch (error) {
      this.options.log.error('plugin process restart failed', { plugin: this.options.pluginId, error: (error as Error).message });
      if (!this.closing) this.scheduleRestart();
    }
  }
}

function withLimit<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(onTimeout()), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for a restart to finish, or for the call's own stop. */
function untilReadyOrStopped(ready: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void ready.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** A capability's answer as sent, or an error saying why it cannot cross to the plugin's process. */
function capabilityAnswer(id: number, value: unknown): KernelMessage {
  try {
    structuredClone(value);
  } catch (error) {
    return { type: 'capability-result', id, error: { message: `the answer cannot be sent to a plugin in a process of its own: ${(error as Error).message}` } };
  }
  return { type: 'capability-result', id, value };
}
