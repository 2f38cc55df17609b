import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { KernelError } from '../../errors.js';
import { findServingKernel, type ServeAddress } from '../../http/serve-address.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';
import { CHAT_COMMANDS, runChat } from '../chat/chat-loop.js';
import { HttpChatBackend, type ServingKernel } from '../chat/http-backend.js';
import { KernelClient } from '../chat/kernel-client.js';
import { LocalChatBackend } from '../chat/local-backend.js';
import { modelServerName } from '../chat/model-server.js';

const HELP = `Usage: quire chat [--session <id>] [--workspace <dir>]

Talks with the agent in this workspace, as the person at the terminal. Each call with an effect is
shown and waits for your answer (y: once, a: always, n: no). The model is the one quire.json
configures (plugins.providers.config.model).

When \`quire serve\` runs on the workspace, the chat talks to that kernel over HTTP (its address is in
<workspace>/.quire/serve.json, the admin token in .quire/admin.token); otherwise it opens the
workspace itself.

In the chat:
${CHAT_COMMANDS.split('\n').slice(1).join('\n')}

Options:
  -s, --session <id>      go on with an existing session (default: a new one)
  -w, --workspace <dir>   workspace folder (default: ./workspace)`;

type Terminal = CliIO & { readLine: NonNullable<CliIO['readLine']> };

export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk with the agent in the terminal, answering its confirmations',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, session: { type: 'string', short: 's' } }, io, 'chat', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(HELP), EXIT_OK;
    if (!io.readLine) {
      io.err('quire chat: needs a terminal or piped input');
      return EXIT_USAGE;
    }
    const terminal = io as Terminal;
    const root = resolve(String(parsed.values.workspace ?? './workspace'));
    const session = typeof parsed.values.session === 'string' ? parsed.values.session : undefined;
    try {
      const serving = await findServingKernel(root);
      return serving ? await chatOverHttp(root, serving, session, terminal) : await chatInProcess(root, session, terminal);
    } catch (error) {
      io.err(`quire chat: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

/** A kernel serves the workspace (and holds its lock): the chat is one more of its HTTP clients. */
async function chatOverHttp(root: string, serving: ServeAddress, session: string | undefined, io: Terminal): Promise<number> {
  const tokenFile = join(root, '.quire', 'admin.token');
  // Read again for a kernel started again (the token file may have been renewed).
  const servingKernel = async (at: ServeAddress): Promise<ServingKernel | undefined> => {
    const token = (await readFile(tokenFile, 'utf8').catch(() => '')).trim();
    return token === '' ? undefined : { client: new KernelClient(at.url, token), instance: at.instance };
  };
  const first = await servingKernel(serving);
  if (!first) throw new KernelError('UNAUTHENTICATED', `the workspace is served at ${serving.url}, but ${tokenFile} holds no admin token to talk to it with`);
  const findKernel = async (): Promise<ServingKernel | undefined> => {
    const now = await findServingKernel(root);
    return now ? servingKernel(now) : undefined;
  };
  const backend = await HttpChatBackend.open(first, session, findKernel);
  const stopWatching = cancelTurnOnSignal(backend);
  try {
    return await runChat(backend, io, await modelServerName(root), session !== undefined);
  } finally {
    stopWatching();
  }
}

/**
 * A chat ended by SIGTERM or SIGHUP (its terminal closed) stops its own turn on the serving kernel first,
 * for two seconds at most: the turn went on there, waiting at a confirmation for its limit (ten
 * minutes) with the session busy. A chat holding the workspace itself needs none of this: its turn
 * ends with its process.
 */
function cancelTurnOnSignal(backend: HttpChatBackend): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    const limit = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
    const cancelled = backend.runsOwnTurn ? backend.cancelTurn().catch(() => false) : Promise.resolve(false);
    void Promise.race([cancelled, limit]).finally(() => process.exit(signal === 'SIGHUP' ? 129 : 143));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  };
}

/** Nobody serves the workspace: the chat opens it, holding its lock while it runs. */
async function chatInProcess(root: string, session: string | undefined, io: Terminal): Promise<number> {
  // The agent's calls keep the time limit quire.json gives them, not the CLI's long one.
  return withKernel(root, io, async (kernel) => {
    // A missing or misconfigured model is said before the person types anything.
    await kernel.turns.check('');
    const backend = await LocalChatBackend.open(kernel, session);
    return runChat(backend, io, await modelServerName(root), session !== undefined);
  }, { configuredActionLimit: true, watchHandEdits: true });
}
