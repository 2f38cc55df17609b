import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startHttpServer, type RunningServer } from '../../core/http/serve.js';
import type { KernelConfigFile } from '../../core/config/kernel-config.js';
import type { Kernel } from '../../core/kernel.js';
import { ModelWireServer, type Reply } from '../../fakes/model-wire-server.js';
import { framesFor, type ScriptRound } from '../../fakes/wire-frames.js';
import { useBlocks, type Act } from '../plugins/blocks/blocks-harness.js';
import { REPO_ROOT } from '../helpers/harness.js';

export const ADMIN = 'qk_web-admin-token';
export const READER = 'qk_web-reader-token';
const KEY_ENV = 'QUIRE_WEB_TEST_KEY';
/** Chromium from Debian (`.ci/run` installs it); QUIRE_CHROMIUM names another. */
export const CHROMIUM = process.env.QUIRE_CHROMIUM ?? '/usr/bin/chromium';
/** Where the tests leave screenshots of the main views, for a person to look at. */
export const SCREENSHOTS = join(REPO_ROOT, 'test-output', 'screenshots');

const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
export const round = (script: ScriptRound): Reply => ({ kind: 'sse', frames: framesFor('openai-chat', script) });

export interface WebKernel {
  kernel: Kernel;
  act: Act;
  url: string;
  fake: ModelWireServer;
  page: Page;
  signIn(token: string): Promise<void>;
  /** Opens the agent page and starts a session there, as a person does; answers its id. */
  newSession(): Promise<string>;
  shot(name: string): Promise<void>;
}

/**
 * A real kernel serving the built web app over loopback, its model the OpenAI SDK pointed at a
 * loopback fake, and a real Chromium driven by playwright-core. The app must be built (`npm run build`
 * runs Vite); a missing build or browser fails the test with what to do.
 */
export function useWebApp() {
  const { boot, tempDir } = useBlocks();
  let browser: Browser | undefined;
  const servers: RunningServer[] = [];
  const fakes: ModelWireServer[] = [];
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set QUIRE_CHROMIUM)`);
    if (!existsSync(join(REPO_ROOT, 'dist', 'web', 'index.html'))) throw new Error('the web app is not built: npm run build');
    await mkdir(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => { await browser?.close(); });
  afterEach(async () => {
    // The page first: no request of it may still be running when the kernel closes and its folder goes.
    for (const context of contexts.splice(0)) await context.close();
    for (const server of servers.splice(0)) await server.close();
    for (const fake of fakes.splice(0)) await fake.close();
    delete process.env[KEY_ENV];
  });

  async function start(options: { width?: number; colorScheme?: 'light' | 'dark'; config?: KernelConfigFile; providers?: Record<string, unknown>; plugins?: Record<string, unknown> } = {}): Promise<WebKernel> {
    const fake = await ModelWireServer.start(['fake-model']);
    fakes.push(fake);
    process.env[KEY_ENV] = 'sk-quire-web-0123456789';
    const { kernel, act } = await boot({
      config: {
        ...options.config,
        auth: { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN) }, { name: 'rita', role: 'reader', sha256: sha(READER) }] },
        plugins: { ...options.plugins, providers: { config: { model: { provider: 'openai-chat', model: 'fake-model', baseURL: `${fake.url}/v1`, apiKeyEnv: KEY_ENV }, ...options.providers } } },
      },
    });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const context = await browser!.newContext({ viewport: { width: options.width ?? 1280, height: 860 }, colorScheme: options.colorScheme ?? 'light' });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    return {
      kernel, act, url: server.url, fake, page,
      async signIn(token) {
        await page.goto(`${server.url}/`);
        await page.getByLabel('Token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
      },
      async newSession() {
        await page.getByRole('link', { name: 'Agent' }).click();
        await page.getByRole('button', { name: 'New session' }).click();
        // Loaded: its title's Rename is offered once the session is read (the placeholder "Session" came before).
        await page.locator('.chat').getByRole('button', { name: 'Rename' }).waitFor();
        return decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
      },
      async shot(name) {
        await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
      },
    };
  }
  return { start, tempDir };
}
