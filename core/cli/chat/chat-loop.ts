import { EXIT_OK, EXIT_PROBLEMS, type CliIO } from '../cli-io.js';
import { describeError } from '../one-shot-kernel.js';
import type { ChatBackend } from './chat-backend.js';
import { ChatScreen } from './chat-screen.js';
import { Prompter } from './prompter.js';
import { printableIO } from './terminal-text.js';
import { undoCommand } from './undo-command.js';

/** What /help shows: the chat answers it itself, it never goes to the model. */
export const CHAT_COMMANDS = `Commands:
  /help                this list
  /mode auto|confirm   let the agent act without asking (if gate.allowAutoMode), or ask again
  /undo [n]            roll back a turn's writes: without n, lists the turns that wrote and asks which
  /quit                leave (also Ctrl-D)
Ctrl-C stops the agent's turn; at a confirmation it answers no; at the > prompt it leaves.`;

/** A word after a slash, alone or with arguments: a command, not a message (a path like /etc/x is a message). */
const COMMAND = /^\/([a-z]+)(?:\s+(.*))?$/i;

interface Chat {
  backend: ChatBackend;
  io: CliIO;
  prompter: Prompter;
  screen: ChatScreen;
}

/**
 * Runs the chat on a backend (a kernel in this process, or a serving one over HTTP) until /quit, the
 * end of input or Ctrl-C at the message prompt.
 */
export async function runChat(backend: ChatBackend, terminal: CliIO & { readLine: NonNullable<CliIO['readLine']> }, modelServer: string, resumed: boolean): Promise<number> {
  // Everything the chat shows passes here: a model's answer, notes, tool results, questions.
  const io = printableIO(terminal);
  const prompter = new Prompter(io);
  const chat: Chat = { backend, io, prompter, screen: new ChatScreen(backend, io, prompter, modelServer) };
  io.out(`Session ${backend.sessionId} (${backend.where}). Type a message; /help lists the commands.`);
  const stopListening = prompter.listen();
  try {
    if (resumed) await answerPending(chat);
    return await chatLoop(chat);
  } finally {
    stopListening();
  }
}

async function chatLoop(chat: Chat): Promise<number> {
  for (;;) {
    const { line } = await chat.prompter.ask('> ');
    const text = line?.trim();
    if (text === undefined) return EXIT_OK;
    if (text === '') continue;
    const command = COMMAND.exec(text);
    if (command && ['quit', 'exit'].includes(command[1]!.toLowerCase())) return EXIT_OK;
    if (command) await runCommand(chat, command[1]!.toLowerCase(), command[2]?.trim() ?? '');
    else await runTurn(chat, text);
    if (!await stillConnected(chat)) return EXIT_PROBLEMS;
  }
}

/** Whether the chat can go on after a request that did not reach the kernel (see ChatBackend.stillConnected). */
async function stillConnected({ backend, io }: Chat): Promise<boolean> {
  const state = await backend.stillConnected?.() ?? { ok: true };
  if (!state.ok) {
    io.err(`${state.reason}; session ${backend.sessionId} is kept: \`quire chat --session ${backend.sessionId}\` goes on with it`);
    return false;
  }
  if (state.restarted) {
    // Cut off mid-answer, the message was taken and its turn may have written: sent again, it would act twice.
    io.out(`(the workspace's kernel was started again, at ${state.restarted.url}: the chat goes on there; ${state.restarted.cutOff
      ? 'the turn under way was cut off when it stopped, and what it did stays: see the session, or /undo, before asking again'
      : 'your message did not reach it and was not sent: type it again'})`);
  }
  return true;
}

async function runCommand(chat: Chat, name: string, argument: string): Promise<void> {
  const { io } = chat;
  switch (name) {
    case 'help': return io.out(CHAT_COMMANDS);
    case 'undo': return undoCommand(argument, chat);
    case 'mode': return setMode(chat, argument);
    default: return io.err(`no command /${name}: /help lists them`);
  }
}

async function setMode({ backend, io }: Chat, mode: string): Promise<void> {
  if (mode !== 'auto' && mode !== 'confirm') return io.err('the mode is auto or confirm');
  try {
    await backend.setMode(mode);
    io.out(`mode ${mode}`);
  } catch (error) {
    io.err(`mode: ${describeError(error)}`);
  }
}

/** One turn, shown as it runs; Ctrl-C outside a prompt stops it. */
async function runTurn({ backend, io, prompter, screen }: Chat, message: string): Promise<void> {
  try {
    await prompter.duringTurn(
      () => { void backend.cancelTurn().catch((error: unknown) => io.err(`could not stop the turn: ${describeError(error)}`)); },
      () => backend.runTurn(message, (event) => screen.show(event)),
    );
  } catch (error) {
    screen.endText();
    io.err(`error: ${describeError(error)}`);
  } finally {
    screen.endText();
  }
}

/** Going on with a session whose turn waits (its client left): its confirmations and questions are asked here. */
async function answerPending({ backend, io, screen }: Chat): Promise<void> {
  try {
    const pending = await backend.pending();
    // Only the running turn's are asked: answered for a turn that ended, they count for nothing, and
    // "always" made a standing grant (the kernel expires a killed turn's at its next start as well).
    const session = await backend.session();
    const running = session.recoveryState === 'running' ? session.recoveryTurnID : undefined;
    const confirmations = pending.confirmations.filter((confirmation) => confirmation.turnId === undefined || confirmation.turnId === running);
    const left = pending.confirmations.length - confirmations.length;
    if (left > 0) io.out(`(${left} question${left === 1 ? '' : 's'} of a turn that is no longer running left unanswered)`);
    const { questions } = pending;
    if (confirmations.length + questions.length === 0) return;
    io.out("(this session's turn is waiting for answers)");
    for (const confirmation of confirmations) await screen.show({ type: 'confirm', roundID: '', confirmation });
    for (const question of questions) await screen.show({ type: 'question', roundID: '', questionID: question.id, questions: question.questions });
  } catch (error) {
    io.err(`pending: ${describeError(error)}`);
  }
}
