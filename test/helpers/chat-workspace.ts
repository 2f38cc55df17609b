import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.js';
import type { Principal } from '../../core/plugin-api.js';
import { framesFor, type ScriptRound } from '../../fakes/wire-frames.js';
import type { Reply } from '../../fakes/model-wire-server.js';
import { afterEach } from 'vitest';
import { ModelWireServer } from '../../fakes/model-wire-server.js';
import { CliProcess, startServe } from './cli-process.js';
import type { BootOptions } from './harness.js';

const PERSON: Principal = { kind: 'person', name: 'x', role: 'admin' };
export const KEY_ENV = { QUIRE_CHAT_TEST_KEY: 'sk-chat-test' };

export interface ChatWorkspace {
  root: string;
  docId: string;
  /** The document's one block ("first line") when it was made. */
  firstBlockId: string;
}

/**
 * A workspace with one notebook and a document holding "first line", and a quire.json whose model
 * is an OpenAI-compatible server at `baseURL` (the fake's `/v1`).
 */
export async function chatWorkspace(boot: (options: BootOptions) => Promise<Kernel>, baseURL: string): Promise<ChatWorkspace> {
  const kernel = await boot({ realManifests: true, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
  const call = async <T>(target: string, input: Record<string, unknown>): Promise<T> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: PERSON });
    return (outcome as { value: T }).value;
  };
  const notebook = await call<{ id: string }>('notebook_create', { name: 'N' });
  const doc = await call<{ id: string }>('document_create', { notebook: notebook.id, title: 'D', markdown: 'first line' });
  const tree = await call<{ document: { children: { id: string }[] } }>('document_get', { id: doc.id });
  const root = kernel.workspace.root;
  await kernel.close();
  const model = { provider: 'openai-chat', model: 'chat-model', baseURL, apiKeyEnv: 'QUIRE_CHAT_TEST_KEY' };
  await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { blocks: { config: { welcome: false } }, providers: { config: { model } } } }));
  return { root, docId: doc.id, firstBlockId: tree.document.children[0]!.id };
}

export type ChatMode = 'in-process' | 'over HTTP';
export const CHAT_MODES: readonly ChatMode[] = ['in-process', 'over HTTP'];

export interface RunningChat {
  chat: CliProcess;
  /** The serving kernel, in HTTP mode. */
  serve?: { process: CliProcess; url: string; token: string };
}

/**
 * Starts `quire chat` on the workspace: alone (it opens the workspace itself), or beside a running
 * `quire serve` (which then holds the model key; the chat gets none, so it cannot be the one talking
 * to the model).
 */
export async function startChat(root: string, mode: ChatMode, processes: CliProcess[], args: string[] = []): Promise<RunningChat> {
  if (mode === 'in-process') {
    const chat = CliProcess.start(['chat', '--workspace', root, ...args], KEY_ENV);
    processes.push(chat);
    return { chat };
  }
  const serve = await startServe(root, KEY_ENV);
  processes.push(serve.process);
  const token = (await readFile(join(root, '.quire', 'admin.token'), 'utf8')).trim();
  const chat = CliProcess.start(['chat', '--workspace', root, ...args]);
  processes.push(chat);
  return { chat, serve: { ...serve, token } };
}

/** A model reply streamed in the OpenAI chat wire format. */
export function sse(round: ScriptRound): Reply {
  return { kind: 'sse', frames: framesFor('openai-chat', round) };
}

/** A model reply that calls one tool. */
export function callReply(name: string, args: Record<string, unknown>, id = 'call_1'): Reply {
  return sse({ calls: [{ id, name, args }] });
}

/** An admin's JSON request to a serving kernel. */
export async function adminJson<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return await response.json() as T;
}

/**
 * The document's text after the chat: asked of the serving kernel, or (in-process mode, once the
 * chat has left and freed the workspace) of a kernel booted for the look.
 */
export async function documentMarkdown(running: RunningChat, boot: (options: BootOptions) => Promise<Kernel>, root: string, docId: string): Promise<string> {
  if (running.serve) {
    const answer = await adminJson<{ result: { markdown: string } }>(running.serve.url, running.serve.token, 'POST', '/api/actions/blocks/document/get_markdown', { id: docId });
    return answer.result.markdown;
  }
  const kernel = await boot({ realManifests: true, workspace: root, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
  const outcome = await kernel.pipeline.call({ target: 'document_get_markdown', input: { id: docId }, principal: PERSON });
  return (outcome as { value: { markdown: string } }).value.markdown;
}

/**
 * The CLI processes and fake model servers a test starts, ended after each test. Call it after
 * useHarness: after-hooks run last registered first, so they are gone before the harness removes
 * their folders.
 */
export function useChatProcesses(): { processes: CliProcess[]; fakeModel(): Promise<ModelWireServer> } {
  const processes: CliProcess[] = [];
  const fakes: ModelWireServer[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((child) => { child.kill(); return child.exited; }));
    for (const fake of fakes.splice(0)) await fake.close();
  });
  return {
    processes,
    async fakeModel() {
      const fake = await ModelWireServer.start(['chat-model']);
      fakes.push(fake);
      return fake;
    },
  };
}
