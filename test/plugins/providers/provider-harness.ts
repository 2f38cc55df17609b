import { createHash } from 'node:crypto';
import { afterEach } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import { ModelWireServer, type Reply } from '../../../fakes/model-wire-server.js';
import { framesFor, type ScriptRound, type WireProtocol } from '../../../fakes/wire-frames.js';
import { readEvents, type SseEvent } from '../../helpers/sse-events.js';
import { useBlocks } from '../blocks/blocks-harness.js';
import type { UserPlugin } from '../../helpers/harness.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';

export const PROTOCOLS: readonly WireProtocol[] = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];
export const MODEL = 'fake-model';
/** A key only this test knows: it must reach the fake's headers and nothing on disk. */
export const KEY = 'sk-quire-test-0123456789';
const KEY_ENV = 'QUIRE_TEST_MODEL_KEY';
const ADMIN = 'qk_providers-admin';

export const sse = (protocol: WireProtocol, round: ScriptRound): Reply => ({ kind: 'sse', frames: framesFor(protocol, round) });

/** The base URL each SDK is given for the fake (PROTOCOLS.md §3: OpenAI's carries /v1). */
function baseURL(protocol: WireProtocol, url: string): string {
  return protocol.startsWith('openai') ? `${url}/v1` : url;
}

/** A kernel with the real plugins whose model is `protocol`'s SDK pointed at a loopback fake. */
export function useProviderKernel() {
  const { boot, tempDir } = useBlocks();
  const servers: ModelWireServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    delete process.env[KEY_ENV];
  });
  async function start(protocol: WireProtocol, options: { model?: Record<string, unknown>; agent?: Record<string, unknown>; key?: string | undefined; workspace?: string; plugins?: Record<string, unknown>; userPlugins?: Record<string, UserPlugin>; kernelPlugins?: Record<string, unknown>; kernelConfig?: KernelConfigFile } = {}) {
    const fake = await ModelWireServer.start([MODEL]);
    servers.push(fake);
    if (options.key !== undefined || !('key' in options)) process.env[KEY_ENV] = options.key ?? KEY;
    const { kernel, act } = await boot({
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.userPlugins ? { userPlugins: options.userPlugins } : {}),
      config: {
        ...options.kernelConfig,
        auth: { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] },
        ...(options.agent ? { agent: options.agent } : {}),
        plugins: { ...options.kernelPlugins, providers: { config: { model: { provider: protocol, model: MODEL, baseURL: baseURL(protocol, fake.url), apiKeyEnv: KEY_ENV, ...options.model }, ...options.plugins } } },
      },
    });
    const app = createHttpApp(kernel);
    const http = async (method: string, path: string, body?: unknown) => app.request(path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const session = async () => ((await (await http('POST', '/api/agent/sessions', { title: 'Chat' })).json()) as { session: { id: string } }).session.id;
    /** Runs a turn over HTTP/SSE, approving every confirmation it asks for. */
    const turn = async (sessionId: string, message: string, onEvent: (event: SseEvent) => Promise<void> | void = () => undefined) => {
      const response = await http('POST', `/api/agent/sessions/${sessionId}/turns`, { message });
      if (response.status !== 200) return { status: response.status, body: await response.json() as { error: { code: string; message: string } }, events: [] as SseEvent[] };
      const events = await readEvents(response, async (event) => {
        if (event.event === 'confirm') {
          const confirmation = event.data.confirmation as { id: string; argsHash: string };
          await http('POST', `/api/agent/sessions/${sessionId}/confirmations/${confirmation.id}/answer`, { approved: true, argsHash: confirmation.argsHash });
        }
        await onEvent(event);
      });
      return { status: 200, body: undefined, events };
    };
    return { kernel, act, fake, http, session, turn };
  }
  return { start, tempDir };
}
