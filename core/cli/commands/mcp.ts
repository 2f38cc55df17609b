import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readKernelConfigFile, type KernelConfigFile } from '../../config/kernel-config.js';
import { KernelError } from '../../errors.js';
import { findServingKernel } from '../../http/serve-address.js';
import { Kernel } from '../../kernel.js';
import { createLogger } from '../../log.js';
import { createMcpServer } from '../../mcp/mcp-server.js';
import { relayStdioToKernel } from '../../mcp/stdio-relay.js';
import { assertWorkspaceExists } from '../one-shot-kernel.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, exitOnLostLock, type Command } from '../cli-io.js';
import { describeError } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

const HELP = [
  'Usage: quire mcp [--workspace <dir>]',
  '',
  'Speaks MCP over standard input and output, for clients that launch a command (Claude Desktop,',
  'Cursor, Claude Code, Goose). When a kernel already serves the workspace, every request is relayed',
  'to it (same tools, gate and audit; the admin token of .quire/admin.token, or QUIRE_TOKEN);',
  'otherwise the workspace is opened here for as long as the client stays connected.',
  'Logs go to standard error: standard output carries the protocol only.',
  '',
  'Options:',
  '  -w, --workspace <dir>   workspace folder (default: ./workspace)',
].join('\n');

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'MCP over stdio for clients that launch a command (relays to a serving kernel)',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' } }, io, 'mcp', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(HELP), EXIT_OK;
    const root = resolve(String(parsed.values.workspace ?? './workspace'));
    try {
      const serving = await findServingKernel(root);
      const stdio = new StdioServerTransport();
      if (serving) {
        const token = process.env.QUIRE_TOKEN?.trim() || (await readFile(join(root, '.quire', 'admin.token'), 'utf8').catch(() => '')).trim();
        if (token === '') throw new KernelError('UNAUTHENTICATED', `the workspace is served at ${serving.url}, but neither QUIRE_TOKEN nor ${join(root, '.quire', 'admin.token')} gives a token to talk to it with`);
        const relay = await relayStdioToKernel(stdio, serving.url, token);
        // stdin's end (the client quit) ends the relay too, once the requests it sent are answered.
        process.stdin.once('end', () => { void relay.settled().then(() => stdio.close()); });
        io.err(`quire mcp: relaying to the kernel at ${serving.url}`);
        await relay.closed;
        return EXIT_OK;
      }
      await serveOverStdio(root, stdio);
      return EXIT_OK;
    } catch (error) {
      io.err(`quire mcp: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

/** Nobody serves the workspace: it is opened here, and served over stdio until the client goes away. */
async function serveOverStdio(root: string, stdio: StdioServerTransport): Promise<void> {
  assertWorkspaceExists(root);
  const file: KernelConfigFile = await readKernelConfigFile(join(root, 'quire.json'));
  // Every log line to stderr: stdout is the protocol's.
  const kernel = await Kernel.boot({ workspace: root, config: file, logger: createLogger({ tag: 'quire-mcp', sink: { write: (line: string) => process.stderr.write(line) } }) });
  try {
    // The person who launched the client owns the machine and the workspace: an administrator, named as the client.
    const server = createMcpServer(kernel, { kind: 'mcp', name: 'stdio', role: 'admin' });
    const toolsChanged = (): void => { void server.sendToolListChanged().catch(() => undefined); };
    const unsubscribe = kernel.registry.onChange(toolsChanged);
    // A backend coming or going makes tools available or not, as over HTTP (/mcp).
    const unsubscribeBackends = kernel.backends.onChange(toolsChanged);
    const previous = server.onclose;
    const closed = new Promise<void>((done) => { server.onclose = () => { previous?.(); done(); }; });
    await server.connect(stdio);
    // stdin's end (the client quit) closes the transport.
    process.stdin.once('end', () => { void server.close(); });
    void kernel.lockLost.then((holder) => exitOnLostLock((line) => process.stderr.write(`${line}\n`), 'mcp', holder));
    await closed;
    unsubscribe();
    unsubscribeBackends();
  } finally {
    await kernel.close();
  }
}
