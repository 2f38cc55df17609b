import { endInput, type CliIO } from '../cli-io.js';

/** A line typed at a prompt, or why there is none. */
export interface Typed {
  /** Undefined when the input ended or Ctrl-C took the prompt back. */
  line: string | undefined;
  /** Ctrl-C ended the prompt (each prompt decides what that means: no, leave, stop). */
  interrupted: boolean;
}

/**
 * Gives Ctrl-C the meaning of where the chat is: at a prompt it takes the prompt back (a confirmation
 * is then denied, the message prompt left), while a turn streams it stops the turn, elsewhere it
 * ends the input so the chat leaves at its next prompt.
 */
export class Prompter {
  private prompt: AbortController | undefined;
  private stopTurn: (() => void) | undefined;
  /** Ctrl-C came outside a prompt and a turn: the chat leaves at its next prompt. */
  private leaving = false;

  constructor(private readonly io: CliIO & { readLine: NonNullable<CliIO['readLine']> }) {}

  /** Routes the terminal's Ctrl-C here until the returned function is called. */
  listen(): () => void {
    return this.io.onInterrupt?.(() => this.interrupt()) ?? (() => undefined);
  }

  interrupt(): void {
    if (this.prompt) this.prompt.abort();
    else if (this.stopTurn) this.stopTurn();
    else {
      // Remembered here: ending the input alone did nothing, as the next prompt read a new one.
      this.leaving = true;
      endInput();
    }
  }

  /** `fresh`: a question the person must see before answering (a confirmation), see CliIO.readLine. */
  async ask(prompt: string, options?: { fresh?: boolean }): Promise<Typed> {
    if (this.leaving) return { line: undefined, interrupted: false };
    const controller = new AbortController();
    const outer = this.prompt;
    this.prompt = controller;
    try {
      const line = await this.io.readLine(prompt, controller.signal, options);
      return controller.signal.aborted ? { line: undefined, interrupted: true } : { line, interrupted: false };
    } finally {
      this.prompt = outer;
    }
  }

  /** Runs `work` (a turn) with Ctrl-C outside a prompt calling `stop`. */
  async duringTurn<T>(stop: () => void, work: () => Promise<T>): Promise<T> {
    this.stopTurn = stop;
    try {
      return await work();
    } finally {
      this.stopTurn = undefined;
    }
  }
}
