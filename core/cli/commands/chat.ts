import { newId } from '../../ids.js';
import type { Kernel } from '../../kernel.js';
import type { Confirmation } from '../../gate/confirmation.js';
import type { Question } from '../../turn/questions.js';
import type { TurnEvent } from '../../turn/turn-events.js';
import { endInput, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { describeError, withKernel } from '../one-shot-kernel.js';
import { undoTurn } from '../../turn/undo-turn.js';
import { parseOptions } from '../parse-options.js';

const HELP = `Usage: quire chat [--session <id>] [--workspace <dir>]

Talks with the agent in this workspace, as the person at the terminal. Each call with an effect is
shown and waits for your answer (y: once, a: always, n: no). The model is the one quire.json
configures (plugins.providers.config.model).

In the chat:
  /mode auto|confirm   let the agent act without asking (if gate.allowAutoMode), or ask again
  /undo                roll back the last turn's writes (blocks changed since are kept)
  /quit                leave (also Ctrl-D)

Options:
  -s, --session <id>      go on with an existing session (default: a new one)
  -w, --workspace <dir>   workspace folder (default: ./workspace)`;

/** Arguments shown in a confirmation or a call line: enough to judge, never a wall of text. */
function brief(value: unknown, limit = 300): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** Shows a turn's events as they come, and asks the person what the turn waits for. */
class ChatScreen {
  private inText = false;
  lastTurnId: string | undefined;

  constructor(private readonly kernel: Kernel, private readonly io: CliIO, private readonly sessionId: string) {}

  async show(event: TurnEvent): Promise<void> {
    const { io } = this;
    if (event.type !== 'content' && this.inText) this.endText();
    switch (event.type) {
      case 'turn': this.lastTurnId = event.turnID; return;
      case 'content':
        if (io.write) io.write(event.delta);
        else io.out(event.delta);
        this.inText = io.write !== undefined;
        return;
      case 'tool_call': io.out(`→ ${event.name} ${brief(event.arguments, 200)}`); return;
      case 'tool_result': io.out(`${event.ok ? '←' : '✗'} ${brief(event.output.replace(/\s+/g, ' '), 200)}`); return;
      case 'snapshot': io.out(`(snapshot ${event.snapshotID} taken before the first write)`); return;
      case 'retry': io.out(`(the model failed: ${event.category}; trying again in ${Math.round(event.delayMs / 100) / 10} s, ${event.attempt}/${event.max})`); return;
      case 'error': io.err(`error ${event.code}: ${event.message}`); return;
      case 'usage': io.out(`(${event.promptTokens} tokens in, ${event.completionTokens} out)`); return;
      case 'confirm': await this.confirm(event.confirmation); return;
      case 'question': await this.ask(event.questionID, event.questions); return;
      default: return;
    }
  }

  private endText(): void {
    this.io.write?.('\n');
    this.inText = false;
  }

  private async confirm(confirmation: Confirmation): Promise<void> {
    const { io } = this;
    io.out(`The agent wants to call ${confirmation.wireName} (${confirmation.effects.join(', ')}${confirmation.destructive ? ', destructive' : ''}):`);
    io.out(`  ${brief(confirmation.arguments, 1_000)}`);
    let approved = false;
    let always = false;
    for (;;) {
      const answer = (await io.readLine!('Allow? [y]es once, [a]lways, [n]o: '))?.trim().toLowerCase();
      if (answer === undefined || answer === 'n' || answer === 'no' || answer === '') break;
      if (answer === 'y' || answer === 'yes') { approved = true; break; }
      if (answer === 'a' || answer === 'always') { approved = true; always = true; break; }
    }
    try {
      await this.kernel.confirmations.answer(confirmation.id, { approved, argsHash: confirmation.argsHash, answeredBy: 'person:cli', ...(always ? { always: true } : {}) });
    } catch (error) {
      // Too late (the turn stopped waiting) or answered elsewhere: say so, the chat goes on.
      io.err(`the answer was not taken: ${describeError(error)}`);
    }
  }

  /** Asks until the answers fit the questions (or the input ends, which leaves them to time out). */
  private async ask(questionId: string, questions: Question[]): Promise<void> {
    const { io } = this;
    for (let attempt = 0; attempt < 5; attempt++) {
      const answers: string[][] = [];
      for (const question of questions) {
        io.out(`${question.header ? `${question.header}: ` : ''}${question.question}`);
        (question.options ?? []).forEach((option, index) => io.out(`  ${index + 1}. ${option.label}${option.description ? ` (${option.description})` : ''}`));
        const typed = await io.readLine!(question.multiple ? 'Your answers (numbers or text, comma separated): ' : 'Your answer (number or text): ');
        if (typed === undefined) return;
        const parts = (question.multiple ? typed.split(',') : [typed]).map((part) => part.trim()).filter(Boolean);
        answers.push(parts.map((part) => question.options?.[Number(part) - 1]?.label ?? part));
      }
      try {
        this.kernel.turns.questions.answer(this.sessionId, questionId, answers);
        return;
      } catch (error) {
        io.err(`${describeError(error)}; please answer again`);
      }
    }
  }
}

/**
 * Runs one turn, showing its events in order while it runs (a confirmation waits for the answer).
 * Whatever happens on the screen, the turn is ended before this returns: never left running against
 * a kernel about to close.
 */
async function runTurn(kernel: Kernel, screen: ChatScreen, sessionId: string, message: string, io: CliIO): Promise<void> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const turn = kernel.turns.start(sessionId, message, (event) => { queue.push(event); wake?.(); })
    .catch((error: unknown) => io.err(`error: ${describeError(error)}`))
    .finally(() => { finished = true; wake?.(); });
  try {
    while (!finished || queue.length > 0) {
      const event = queue.shift();
      if (event) await screen.show(event);
      else await new Promise<void>((resolve) => { wake = resolve; });
      wake = undefined;
    }
  } finally {
    if (!finished) kernel.turns.cancel(sessionId);
    await turn;
  }
}

export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk with the agent in the terminal, answering its confirmations',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, session: { type: 'string', short: 's' } }, io, 'chat');
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(HELP), EXIT_OK;
    if (!io.readLine) {
      io.err('quire chat: needs a terminal or piped input');
      return EXIT_USAGE;
    }
    try {
      // The agent's calls keep the time limit quire.json gives them, not the CLI's long one.
      return await withKernel(String(parsed.values.workspace ?? './workspace'), io, async (kernel) => {
        await kernel.turns.check('');
        const sessionId = typeof parsed.values.session === 'string' ? (await kernel.sessions.read(parsed.values.session)).id : (await kernel.sessions.save({ id: newId(), entries: [], title: 'Terminal chat', expectedRevision: 0 })).session.id;
        const screen = new ChatScreen(kernel, io, sessionId);
        io.out(`Session ${sessionId}. Type a message; /quit to leave, /mode auto|confirm, /undo.`);
        // Ctrl-C stops the agent's turn (its draft is kept); outside a turn it leaves, as at any prompt.
        const stopInterrupts = io.onInterrupt?.(() => {
          if (!kernel.turns.cancel(sessionId)) { endInput(); }
        });
        try {
          return await chatLoop(kernel, io, screen, sessionId);
        } finally {
          stopInterrupts?.();
        }
      }, { configuredActionLimit: true });
    } catch (error) {
      io.err(`quire chat: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

/** Reads the person's lines until /quit or the end of input: messages become turns, /commands act. */
async function chatLoop(kernel: Kernel, io: CliIO, screen: ChatScreen, sessionId: string): Promise<number> {
  for (;;) {
    const line = (await io.readLine!('> '))?.trim();
    if (line === undefined || line === '/quit') return EXIT_OK;
    if (line === '') continue;
    if (line.startsWith('/mode ')) {
      const mode = line.slice(6).trim();
      if (mode !== 'auto' && mode !== 'confirm') io.err('the mode is auto or confirm');
      else if (mode === 'auto' && !kernel.config.gate.allowAutoMode) io.err('auto mode is not allowed here (gate.allowAutoMode in quire.json)');
      else {
        await kernel.sessions.setPermissionMode(sessionId, mode);
        io.out(`mode ${mode}`);
      }
      continue;
    }
    if (line === '/undo') await undoLastTurn(kernel, sessionId, screen.lastTurnId, io);
    else await runTurn(kernel, screen, sessionId, line, io);
  }
}

async function undoLastTurn(kernel: Kernel, sessionId: string, turnId: string | undefined, io: CliIO): Promise<void> {
  if (!turnId) return io.err('no turn to undo yet');
  try {
    const result = await undoTurn(kernel, sessionId, turnId, false, 'person:cli');
    io.out(`undone (${result.mode})${result.conflicts.length > 0 ? `; ${result.conflicts.length} block(s) changed since were left as they are` : ''}`);
  } catch (error) {
    io.err(`undo: ${describeError(error)}`);
  }
}
