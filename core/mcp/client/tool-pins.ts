import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../canonical-json.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';

interface PinFile {
  servers: Record<string, Record<string, { hash: string; pinnedAt: string }>>;
}

/** The hash of everything a model or the gate reads of a tool: a change to any of it is a new tool. */
export function definitionHash(tool: Tool): string {
  const { name, title, description, inputSchema, outputSchema, annotations } = tool;
  return createHash('sha256').update(canonicalJson({ name, title, description, inputSchema, outputSchema, annotations })).digest('hex');
}

/**
 * The definitions of external tools as they were first seen (or last approved), by server and tool
 * name, in `.quire/mcp-pins.json`. A tool seen for the first time is pinned; a tool whose definition
 * no longer matches its pin stays disabled until a person approves the new one.
 */
export class ToolPins {
  private pins: PinFile = { servers: {} };
  private readonly file: string;

  constructor(privateDir: string) {
    this.file = join(privateDir, 'mcp-pins.json');
  }

  async load(): Promise<void> {
    const text = await readFile(this.file, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    const parsed = JSON.parse(text) as Partial<PinFile>;
    this.pins = { servers: parsed.servers ?? {} };
  }

  get(server: string, tool: string): string | undefined {
    return this.pins.servers[server]?.[tool]?.hash;
  }

  async pin(server: string, tool: string, hash: string): Promise<void> {
    (this.pins.servers[server] ??= {})[tool] = { hash, pinnedAt: new Date().toISOString() };
    await writeFileAtomic(this.file, `${JSON.stringify(this.pins, null, 2)}\n`);
  }
}
