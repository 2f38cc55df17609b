import { progressBar } from '../progress-bar.js';
import type { Confirmation } from '../../gate/confirmation.js';
import type { Question } from '../../turn/questions.js';
import type { TurnEvent } from '../../turn/turn-events.js';
import type { CliIO } from '../cli-io.js';
import { describeError } from '../one-shot-kernel.js';
import type { ChatBackend } from './chat-backend.js';
import type { Prompter } from './prompter.js';

/** Arguments shown in a confirmation or a call line: enough to judge, never a wall of text. */
export function brief(value: unknown, limit = 300): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= limit) return text;
  // Not between the two halves of a character outside the BMP (an emoji was shown as �).
  const cut = /[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? limit - 1 : limit;
  return `${text.slice(0, cut)}…`;
}

/**
 * A tool's result as the person reads it: the [tool_output] wrapper (core/turn/tool-output.ts) tells
 * the model the text is data, not instructions; to the person it is noise.
 */
export function forPerson(output: string): string {
  return output.replace(/^\[tool_output\]\n?/, '').replace(/\n?\[\/tool_output\]$/, '');
}

/** Shows a turn's events as they come, and asks the person what the turn waits for. */
export class ChatScreen {
  private inText = false;
  /** Whether the turn under way has shown any of its answer (a stopped turn says what it keeps). */
  private answered = false;
  /** One progress bar per long call of the turn. */
  private readonly bars = new Map<string, ReturnType<typeof progressBar>>();

  constructor(
    private readonly backend: ChatBackend,
    private readonly io: CliIO,
    private readonly prompter: Prompter,
    /** How the model's server is named when it cannot be reached (its configured URL). */
    private readonly modelServer: string,
  ) {}

  async show(event: TurnEvent): Promise<void> {
    if (event.type !== 'content' && this.inText) this.endText();
    switch (event.type) {
      // A new turn: a turn before it that broke off without its end must not lend it its answer.
      case 'turn': this.answered = false; return undefined;
      case 'content': return this.text(event.delta);
      case 'tool_call': return this.io.out(`→ ${event.name} ${brief(event.arguments, 200)}`);
      case 'tool_result': return this.io.out(`${event.ok ? '←' : '✗'} ${brief(forPerson(event.output).replace(/\s+/g, ' ').trim(), 200)}`);
      case 'job': return this.io.out(`(${event.action} runs as job ${event.jobID})`);
      case 'progress': return this.bar(event.toolCallID).update(event.progress);
      case 'snapshot': return this.io.out(`(snapshot ${event.snapshotID} taken before the first write)`);
      case 'retry': return this.io.out(`(${this.failure(event.category)}; trying again in ${Math.round(event.delayMs / 100) / 10} s, ${event.attempt}/${event.max})`);
      case 'error': return this.io.err(`error ${event.code}: ${event.code === 'MODEL_NETWORK' ? `${this.unreachable()} (${event.message})` : event.message}`);
      case 'usage': return this.io.out(`(${event.promptTokens} tokens in, ${event.completionTokens} out)`);
      case 'confirm': return this.confirm(event.confirmation);
      case 'question': return this.ask(event.questionID, event.questions);
      case 'done': {
        const answered = this.answered;
        this.answered = false;
        if (event.state !== 'interrupted') return undefined;
        return this.io.out(answered ? '(the turn stopped; its answer so far is kept)' : '(the turn stopped before it answered)');
      }
      default: return undefined;
    }
  }

  private bar(toolCallID: string): ReturnType<typeof progressBar> {
    let bar = this.bars.get(toolCallID);
    if (!bar) {
      // Lines, not a bar redrawn in place: the chat's own lines come between.
      // (null: no stream of its own; `undefined` took the default, stderr, and drew escape codes there.)
      bar = progressBar(this.io, null);
      this.bars.set(toolCallID, bar);
    }
    return bar;
  }

  /** Ends a streamed answer's line, so that what follows starts on its own. */
  endText(): void {
    if (!this.inText) return;
    this.io.write?.('\n');
    this.inText = false;
  }

  private text(delta: string): void {
    if (delta !== '') this.answered = true;
    if (this.io.write) this.io.write(delta);
    else this.io.out(delta);
    this.inText = this.io.write !== undefined;
  }

  private unreachable(): string {
    return `${this.modelServer} cannot be reached`;
  }

  private failure(category: string): string {
    return category === 'network' ? this.unreachable() : `the model failed: ${category}`;
  }

  /** Ctrl-C at the prompt is a no, like `n`: the turn goes on with the call refused. */
  private async confirm(confirmation: Confirmation): Promise<void> {
    const { io } = this;
    const release = confirmation.kind !== undefined;
    if (confirmation.kind === 'budget') {
      const args = confirmation.arguments as { budget: string; why: string };
      io.out(`The next model request would pass the ${args.budget} budget: ${args.why}. Go past it for the rest of this turn?`);
    } else if (release) {
      const args = confirmation.arguments as { tool: string; to: string; notebooks: { name: string }[]; characters: number };
      io.out(`The result of ${args.tool} holds notes of local-only notebooks (${args.notebooks.map((notebook) => notebook.name).join(', ')}); send its ${args.characters} characters to ${args.to}?`);
    } else {
      io.out(`The agent wants to call ${confirmation.wireName} (${confirmation.effects.join(', ')}${confirmation.destructive ? ', destructive' : ''}):`);
    }
    if (confirmation.kind !== 'budget') io.out(`  ${brief(confirmation.kind === 'release' ? (confirmation.arguments as { text: string }).text : confirmation.arguments, 1_000)}`);
    const answer = { approved: false, always: false };
    for (let first = true; ; first = false) {
      const { line, interrupted } = await this.prompter.ask(confirmation.kind === 'release' ? 'Send it? [y]es, [n]o (a marker goes instead): ' : confirmation.kind === 'budget' ? 'Go on? [y]es, [n]o (the turn stops): ' : 'Allow? [y]es once, [a]lways, [n]o: ', { fresh: first });
      if (interrupted) io.out('no (Ctrl-C)');
      const typed = line?.trim().toLowerCase();
      if (typed === undefined || typed === 'n' || typed === 'no' || typed === '') break;
      if (typed === 'y' || typed === 'yes') { answer.approved = true; break; }
      if (!release && (typed === 'a' || typed === 'always')) { answer.approved = true; answer.always = true; break; }
    }
    try {
      await this.backend.answerConfirmation(confirmation, answer);
    } catch (error) {
      // Too late (the turn stopped waiting) or answered elsewhere: say so, the chat goes on.
      io.err(`the answer was not taken: ${describeError(error)}`);
    }
  }

  /**
   * Asks until the answers fit the questions. Ctrl-C, the input ending or five answers refused stop
   * the turn, which is what declining to answer amounts to: left to time out, the turn held the
   * workspace for the confirmation limit (ten minutes) after the chat had nothing more to read.
   */
  private async ask(questionId: string, questions: Question[]): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const answers: string[][] = [];
      for (const question of questions) {
        const answer = await this.answerOne(question);
        if (answer === 'interrupted' || answer === undefined) return this.stopTurn(answer === undefined ? 'the input ended' : 'Ctrl-C');
        answers.push(answer);
      }
      try {
        await this.backend.answerQuestion(questionId, answers);
        return;
      } catch (error) {
        // Answered elsewhere (another client of the session) or its turn ended: nothing to answer again.
        const code = (error as { code?: string }).code;
        if (code === 'CONFLICT' || code === 'NOT_FOUND') return void this.io.out(`(the question was answered elsewhere, or its turn ended)`);
        // The kernel is out of reach: asking again would not help (the chat notices once the turn ends).
        if ((error as { details?: { unreachable?: unknown } }).details?.unreachable === true) return void this.io.err(describeError(error));
        this.io.err(`${describeError(error)}; please answer again`);
      }
    }
    return this.stopTurn('no answer was taken');
  }

  private async stopTurn(why: string): Promise<void> {
    this.io.out(`(${why}: the turn is stopped)`);
    await this.backend.cancelTurn().catch(() => false);
  }

  private async answerOne(question: Question): Promise<string[] | undefined | 'interrupted'> {
    const { io } = this;
    io.out(`${question.header ? `${question.header}: ` : ''}${question.question}`);
    (question.options ?? []).forEach((option, index) => io.out(`  ${index + 1}. ${option.label}${option.description ? ` (${option.description})` : ''}`));
    const { line, interrupted } = await this.prompter.ask(question.multiple ? 'Your answers (numbers or text, comma separated): ' : 'Your answer (number or text): ');
    if (interrupted) return 'interrupted';
    if (line === undefined) return undefined;
    const parts = (question.multiple ? line.split(',') : [line]).map((part) => part.trim()).filter(Boolean);
    return parts.map((part) => question.options?.[Number(part) - 1]?.label ?? part);
  }
}
