import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './harness.js';

export const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');

/** Long enough for a slow shared machine; a wait only fails when the text never comes. */
const WAIT_MS = 25_000;

/**
 * The built CLI run with plain node, its stdin piped (as a person typing), stdout and stderr kept
 * together in arrival order. `next` waits for text after what an earlier `next` matched, so a prompt
 * shown twice is waited for twice.
 */
export class CliProcess {
  private text = '';
  private cursor = 0;
  private readonly watchers = new Set<() => void>();
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    const keep = (chunk: Buffer): void => {
      this.text += chunk.toString();
      for (const watcher of [...this.watchers]) watcher();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    this.exited = new Promise((resolve) => child.on('exit', (code) => {
      for (const watcher of [...this.watchers]) watcher();
      resolve(code);
    }));
  }

  static start(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
    return new CliProcess(spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } }));
  }

  /**
   * The same, at a terminal: python3's pty module gives the CLI a pseudo-terminal as its standard
   * streams (what it types is echoed, and line ends come out as \r\n), for what the CLI does only at
   * a terminal. python3 is installed by .ci/run.
   */
  static startInTerminal(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
    const relay = 'import os, pty, sys\nstatus = pty.spawn(sys.argv[1:])\nsys.exit(os.waitstatus_to_exitcode(status))';
    return new CliProcess(spawn('python3', ['-c', relay, process.execPath, CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } }));
  }

  get output(): string {
    return this.text;
  }

  /** Waits for `pattern` after the last match; returns the match (its groups for a RegExp). */
  async next(pattern: string | RegExp, timeoutMs = WAIT_MS): Promise<RegExpExecArray> {
    const find = (): RegExpExecArray | null => {
      const rest = this.text.slice(this.cursor);
      const regex = typeof pattern === 'string' ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : pattern;
      return regex.exec(rest);
    };
    const found = await new Promise<RegExpExecArray | null>((resolve) => {
      const check = (): void => {
        const match = find();
        if (match || this.child.exitCode !== null) finish(match);
      };
      const timer = setTimeout(() => finish(find()), timeoutMs);
      const finish = (match: RegExpExecArray | null): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
        resolve(match);
      };
      this.watchers.add(check);
      check();
    });
    if (!found) throw new Error(`no ${String(pattern)} in the output after position ${this.cursor}:\n${this.text}`);
    this.cursor += found.index + found[0].length;
    return found;
  }

  type(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  /** What Ctrl-C at a terminal sends. */
  interrupt(): void {
    this.child.kill('SIGINT');
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** `quire serve` on a free port (creating the workspace if needed), once it prints where it listens. */
export async function startServe(workspace: string, env: NodeJS.ProcessEnv = {}): Promise<{ process: CliProcess; url: string }> {
  const serve = CliProcess.start(['serve', '--workspace', workspace, '--init', '--port', '0'], env);
  const match = await serve.next(/Listening on (http:\/\/\S+)/);
  return { process: serve, url: match[1]! };
}

/** A stack trace line as Node prints one. */
export const STACK_TRACE = /^\s+at .+:\d+:\d+\)?$/m;
