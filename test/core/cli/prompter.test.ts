import { describe, expect, it } from 'vitest';
import { Prompter } from '../../../core/cli/chat/prompter.js';

/** A terminal whose lines are scripted; Ctrl-C is pressed by calling the handler it was given. */
function terminal(lines: string[]) {
  let handler: (() => void) | undefined;
  const asked: string[] = [];
  return {
    io: {
      out: () => undefined,
      err: () => undefined,
      readLine: async (prompt: string) => { asked.push(prompt); return lines.shift(); },
      onInterrupt: (next: () => void) => { handler = next; return () => { handler = undefined; }; },
    },
    ctrlC: () => handler?.(),
    asked,
  };
}

describe('Ctrl-C in the chat', () => {
  it('outside a prompt and a turn, makes the chat leave at its next prompt (the typed-ahead line is not read)', async () => {
    const { io, ctrlC, asked } = terminal(['typed ahead']);
    const prompter = new Prompter(io);
    const stop = prompter.listen();
    ctrlC();
    expect(await prompter.ask('> ')).toEqual({ line: undefined, interrupted: false });
    expect(asked).toEqual([]);
    stop();
  });

  it('during a turn, stops the turn and leaves the prompts alone', async () => {
    const { io, ctrlC } = terminal(['next message']);
    const prompter = new Prompter(io);
    prompter.listen();
    let stopped = false;
    await prompter.duringTurn(() => { stopped = true; }, async () => { ctrlC(); });
    expect(stopped).toBe(true);
    expect(await prompter.ask('> ')).toEqual({ line: 'next message', interrupted: false });
  });
});
