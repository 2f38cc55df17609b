import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../canonical-json.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';

/** A tool as a person accepted it: its definition's hash and the wire name it was given. */
export interface Pin {
  hash: string;
  wireName: string;
  pinnedAt: string;
}

/** The hash of everything a model or the gate reads of a tool: a change to any of it is a new tool. */
export function definitionHash(tool: Tool): string {
  const { name, title, description, inputSchema, outputSchema, annotations } = tool;
  return createHash('sha256').update(canonicalJson({ name, title, description, inputSchema, outputSchema, annotations })).digest('hex');
}

/**
 * The definitions of external tools as first seen (or last approved), by server and raw tool name, in
 * `.quire/mcp-pins.json`, with the wire name each was given, so that a name never passes to another
 * tool without approval. Maps, not objects: a tool named `__proto__` is a name like any other.
 * Writes are queued, so two pins never race each other to the file.
 */
export class ToolPins {
  private servers = new Map<string, Map<string, Pin>>();
  private readonly file: string;
  private writing: Promise<void> = Promise.resolve();
  /** Set when the file exists but cannot be read: then no server is trusted with first-sight pins. */
  problem: string | undefined;

  constructor(privateDir: string) {
    this.file = join(privateDir, 'mcp-pins.json');
  }

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      // Only a missing file means "nothing pinned yet"; one that cannot be read must not reset trust.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.problem = `${this.file} cannot be read (${(error as Error).message})`;
      return;
    }
    try {
      const parsed = JSON.parse(text) as { servers?: Record<string, Record<string, Pin>> };
      for (const [server, tools] of Object.entries(parsed.servers ?? {})) {
        this.servers.set(server, new Map(Object.entries(tools).filter(([, pin]) => typeof pin?.hash === 'string' && typeof pin.wireName === 'string')));
      }
    } catch (error) {
      this.problem = `${this.file} cannot be read (${(error as Error).message}); fix or remove it`;
    }
  }

  /** Whether this server was ever listed: after that, a tool seen for the first time needs approval. */
  known(server: string): boolean {
    return this.servers.has(server);
  }

  get(server: string, tool: string): Pin | undefined {
    return this.servers.get(server)?.get(tool);
  }

  /** Every wire name given to any server's tools: a new tool must not take one. */
  allWireNames(): Set<string> {
    return new Set([...this.servers.values()].flatMap((pins) => [...pins.values()].map((pin) => pin.wireName)));
  }

  async pin(server: string, entries: readonly { tool: string; hash: string; wireName: string }[]): Promise<void> {
    const tools = this.servers.get(server) ?? new Map<string, Pin>();
    this.servers.set(server, tools);
    const pinnedAt = new Date().toISOString();
    for (const entry of entries) tools.set(entry.tool, { hash: entry.hash, wireName: entry.wireName, pinnedAt });
    const snapshot = JSON.stringify({ servers: Object.fromEntries([...this.servers].map(([name, pins]) => [name, Object.fromEntries(pins)])) }, null, 2);
    const write = this.writing.catch(() => undefined).then(() => writeFileAtomic(this.file, `${snapshot}\n`));
    this.writing = write;
    await write;
  }
}
