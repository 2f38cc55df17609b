import { describe, expect, it } from 'vitest';
import { ChatScreen } from '../../../core/cli/chat/chat-screen.js';
import { progressBar } from '../../../core/cli/progress-bar.js';
import type { ChatBackend } from '../../../core/cli/chat/chat-backend.js';
import type { Prompter } from '../../../core/cli/chat/prompter.js';
import { bufferIO } from '../../helpers/buffer-io.js';

/** A terminal on standard error: what is written to it, kept. */
function terminal(): NodeJS.WriteStream & { written: string } {
  const stream = { isTTY: true, written: '', write(text: string) { stream.written += text; return true; } };
  return stream as unknown as NodeJS.WriteStream & { written: string };
}

describe('progress shown at a terminal', () => {
  it('shows a plugin\'s escape sequences in its progress message as characters, not as commands to the terminal', () => {
    const stderr = terminal();
    const io = { ...bufferIO(), write: () => undefined };
    const bar = progressBar(io, stderr);
    bar.update({ done: 1, total: 2, message: 'importing \u001b[2J\u001b]0;owned\u0007 notes' });
    bar.end();
    expect(stderr.written).not.toMatch(/\u001b\[2J|\u001b\]0;|\u0007/);
    expect(stderr.written).toContain('importing \ufffd[2J\ufffd]0;owned\ufffd notes');
  });

  it('in the chat, goes to the chat\'s own lines, never drawn in place on standard error between them', async () => {
    // A terminal's chat: it writes an answer as it streams.
    const io = { ...bufferIO(), write: () => undefined };
    const screen = new ChatScreen({} as ChatBackend, io, {} as Prompter, 'http://127.0.0.1:1');
    const before = process.stderr.isTTY;
    const write = process.stderr.write.bind(process.stderr);
    let drawn = '';
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    process.stderr.write = ((text: string) => { drawn += text; return true; }) as typeof process.stderr.write;
    try {
      await screen.show({ type: 'progress', toolCallID: 'c1', progress: { done: 5, total: 10, message: 'documents imported' } } as Parameters<ChatScreen['show']>[0]);
    } finally {
      process.stderr.write = write;
      Object.defineProperty(process.stderr, 'isTTY', { value: before, configurable: true });
    }
    expect(drawn).toBe('');
    expect(io.errText()).toContain('5/10 documents imported');
  });
});
