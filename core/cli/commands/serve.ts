import { Kernel } from '../../kernel.js';
import { isKernelError } from '../../errors.js';
import { startHttpServer } from '../../http/serve.js';
import { recordServeAddress } from '../../http/serve-address.js';
import { KERNEL_VERSION } from '../../paths.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export const serveCommand: Command = {
  name: 'serve',
  summary: 'start the kernel and its HTTP API',
  help: `Usage: quire serve [--workspace <dir>] [--host <address>] [--port <n>]

Opens the workspace (created if absent), activates the enabled plugins and serves the HTTP API.
On first start an admin token is generated, saved to <workspace>/.quire/admin.token (mode 0600)
and printed once. Stop with Ctrl-C.

Options:
  -w, --workspace <dir>   workspace folder (default: ./workspace)
      --host <address>    address to bind (default: server.host in quire.json, else 127.0.0.1)
  -p, --port <n>          port (default: server.port in quire.json, else 6806; 0 picks a free one)`,
  async run(args, io) {
    const parsed = parseOptions(args, {
      workspace: { type: 'string', short: 'w' }, host: { type: 'string' }, port: { type: 'string', short: 'p' },
    }, io, 'serve');
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const port = parsed.values.port === undefined ? undefined : Number(parsed.values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      io.err(`quire serve: --port must be an integer from 0 to 65535, got '${String(parsed.values.port)}'`);
      return EXIT_USAGE;
    }
    const host = typeof parsed.values.host === 'string' ? parsed.values.host : undefined;
    return serve(String(parsed.values.workspace ?? './workspace'), { ...(host ? { host } : {}), ...(port !== undefined ? { port } : {}) }, io);
  },
};

async function serve(workspace: string, overrides: { host?: string; port?: number }, io: CliIO): Promise<number> {
  let kernel: Kernel;
  try {
    kernel = await Kernel.boot({ workspace, generateAdminToken: true });
  } catch (error) {
    io.err(`quire serve: cannot start: ${isKernelError(error) ? `${error.code} ${error.message}` : (error as Error).message}`);
    return EXIT_PROBLEMS;
  }
  const server = await startHttpServer(kernel, overrides).catch(async (error: Error) => {
    await kernel.close();
    io.err(`quire serve: cannot listen: ${error.message}`);
    return undefined;
  });
  if (!server) return EXIT_PROBLEMS;
  await recordServeAddress(kernel, server.url);
  io.out(`Quire ${KERNEL_VERSION} serving ${kernel.workspace.root}`);
  const host = overrides.host ?? kernel.config.server.host;
  if (!LOOPBACK.has(host)) io.err(`warning: bound to ${host}, reachable from other machines; add their Host names to server.allowedHosts`);
  if (kernel.generatedAdminToken) {
    io.out(`Admin token (shown once; also saved in ${kernel.generatedAdminToken.file}, mode 0600):`);
    io.out(`  ${kernel.generatedAdminToken.token}`);
  }
  // Last, so that whoever waits for this line has everything printed before it.
  io.out(`Listening on ${server.url}`);
  await waitForSignal();
  io.out('Stopping…');
  await server.close();
  await kernel.close();
  return EXIT_OK;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
