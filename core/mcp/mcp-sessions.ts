import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { KernelError } from '../errors.js';
import { SessionTransport, isJsonAnswer } from './session-transport.js';
import { boundedEventStream } from './bounded-event-stream.js';

interface McpSession {
  transport: SessionTransport;
  server: Server;
  /** The token that created the session (its digest): only it may use the session. */
  owner: string;
  lastSeen: number;
  /** Requests being answered: a session is never closed under one. */
  inFlight: number;
}

export interface McpSessionLimits {
  /** A session unused this long is closed (its id then answers 404, and the client re-initialises). */
  idleMs: number;
  /** At most this many sessions; an idle one of the token holding the most is closed to make room. */
  maxSessions: number;
}

/**
 * MCP sessions (Streamable HTTP, stateful): sessions exist so that a tools/list_changed notification
 * can reach clients while plugins change. Ids are random UUIDs, each bound to the token that created
 * it, closed when idle or when the client ends it, and bounded in number.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: McpSessionLimits, private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1_000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  /** A new session's transport; `server` is connected to it and the session is kept once initialised. */
  async open(owner: string, server: Server): Promise<WebStandardStreamableHTTPServerTransport> {
    while (this.sessions.size >= this.limits.maxSessions) {
      if (!await this.makeRoom(owner)) throw new KernelError('NOT_READY', `all ${this.limits.maxSessions} MCP sessions are answering requests; try again shortly`, { details: { retryAfterSeconds: 1 } });
    }
    const http: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Answers stream as SSE, so that what belongs to a call (progress notifications for a progress
      // token) reaches the client on that call's own stream; a JSON answer would drop them. Calls that
      // cannot have any are answered as JSON beside it (SessionTransport.answerAsJson).
      enableJsonResponse: false,
      onsessioninitialized: (id) => { this.sessions.set(id, { transport, server, owner, lastSeen: this.now(), inFlight: 0 }); },
      onsessionclosed: (id) => { this.sessions.delete(id); },
    });
    const transport = new SessionTransport(http);
    await server.connect(transport);
    return http;
  }

  /**
   * Answers a request on a session, only for its owner (another token gets the same answer as an
   * unknown id: undefined). The session counts as in use until the answer is given.
   */
  async handle(id: string, owner: string, answer: (transport: SessionTransport) => Promise<Response>): Promise<Response | undefined> {
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner) return undefined;
    session.inFlight++;
    session.lastSeen = this.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      session.inFlight--;
      session.lastSeen = this.now();
    };
    let streaming = false;
    try {
      const response = await answer(session.transport);
      // An event stream (the GET a client keeps open for notifications) is use until it closes.
      if (isJsonAnswer(response) || !response.body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response;
      streaming = true;
      return new Response(boundedEventStream(response.body, release), { status: response.status, headers: response.headers });
    } finally {
      if (!streaming) release();
    }
  }

  /** Tells every open session that the tool list changed. */
  notifyToolsChanged(): void {
    for (const session of this.sessions.values()) void session.server.sendToolListChanged().catch(() => undefined);
  }

  get size(): number {
    return this.sessions.size;
  }

  async sweep(): Promise<void> {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [id, session] of [...this.sessions]) if (session.inFlight === 0 && session.lastSeen < cutoff) await this.close(id, session);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    for (const [id, session] of [...this.sessions]) await this.close(id, session);
  }

  /**
   * Closes one idle session to make room for one of `opener`: the least recently used of the token
   * holding the most sessions (the opener's own when it holds as many as any), so that a client that
   * opens sessions in a loop closes its own, not everyone else's. False when every session is answering
   * a request.
   */
  private async makeRoom(opener: string): Promise<boolean> {
    const held = new Map<string, number>();
    for (const session of this.sessions.values()) held.set(session.owner, (held.get(session.owner) ?? 0) + 1);
    const weight = (owner: string): number => (held.get(owner) ?? 0) + (owner === opener ? 0.5 : 0);
    let chosen: [string, McpSession] | undefined;
    for (const entry of this.sessions) {
      const session = entry[1];
      if (session.inFlight !== 0) continue;
      if (!chosen || weight(session.owner) > weight(chosen[1].owner) || (session.owner === chosen[1].owner && session.lastSeen < chosen[1].lastSeen)) chosen = entry;
    }
    if (chosen) await this.close(...chosen);
    return chosen !== undefined;
  }

  private async close(id: string, session: McpSession): Promise<void> {
    this.sessions.delete(id);
    await session.server.close().catch(() => undefined);
  }
}
