import { open, readFile, realpath } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { extname, join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Hono, type Context } from 'hono';
import { NotFoundError } from '../../errors.js';
import type { Kernel } from '../../kernel.js';
import { PACKAGE_ROOT } from '../../paths.js';
import type { HttpEnv } from '../http-env.js';
import { pageSecurity } from '../middleware/page-security.js';
import { requireRole } from '../middleware/require-role.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp',
  '.avif': 'image/avif', '.bmp': 'image/bmp', '.pdf': 'application/pdf', '.woff2': 'font/woff2',
};
const IMAGES = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.avif', '.bmp']);

interface Served { bytes: Buffer; gzip: Buffer | undefined; type: string }

/**
 * The web app (built by Vite into dist/web): `/` is its page, `/app/assets/<hashed name>` its scripts
 * and styles, cached for good (a new build has new names), gzip-compressed when the browser takes it.
 * Every page goes out with the kernel's CSP: no inline script, no eval, nothing from elsewhere.
 * `GET /api/assets/{name}` serves the workspace's attachments to administrators (their notes' images),
 * as inert files: no sniffing, and a sandbox CSP so that an SVG opened on its own runs nothing.
 */
export function webAppRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const folder = join(PACKAGE_ROOT, 'dist', 'web');
  const cache = new Map<string, Promise<Served | undefined>>();
  // Only files found are kept (a build's few files): a miss is not, so that asking for made-up names
  // cannot grow the kernel's memory, and a build made while serving is picked up.
  const load = (path: string): Promise<Served | undefined> => {
    const cached = cache.get(path);
    if (cached) return cached;
    const served = readFile(path).then((bytes): Served => {
      const type = TYPES[extname(path)] ?? 'application/octet-stream';
      return { bytes, type, gzip: /^text\/|svg/.test(type) && bytes.length > 1024 ? gzipSync(bytes, { level: 9 }) : undefined };
    }, () => {
      cache.delete(path);
      return undefined;
    });
    cache.set(path, served);
    return served;
  };
  const send = (c: Context<HttpEnv>, served: Served, cacheControl: string): Response => {
    const gzip = served.gzip !== undefined && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    return c.body(new Uint8Array(gzip ? served.gzip! : served.bytes), 200, {
      'content-type': served.type, 'cache-control': cacheControl, 'x-content-type-options': 'nosniff', vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
  };
  const security = pageSecurity();
  app.get('/', security, async (c) => {
    // Read each time (half a kilobyte): after a new build it names the new files at once.
    const page = await readFile(join(folder, 'index.html')).then((bytes): Served => ({ bytes, type: TYPES['.html']!, gzip: undefined }), () => undefined);
    if (!page) return c.text('The web app is not built: run `npm run build` (or `npm start`).', 503);
    return send(c, page, 'no-cache');
  });
  app.get('/app/assets/:file', security, async (c) => {
    const file = c.req.param('file');
    const served = /^[\w.-]+$/.test(file) ? await load(join(folder, 'assets', file)) : undefined;
    if (!served) throw new NotFoundError('NOT_FOUND', `no file '${file}' in the web app`);
    return send(c, served, 'public, max-age=31536000, immutable');
  });
  app.get('/api/assets/:name', requireRole('admin'), async (c) => {
    const name = c.req.param('name');
    const found = await attachmentFile(kernel.workspace.root, name);
    if (!found) throw new NotFoundError('NOT_FOUND', `no attachment '${name}' in the workspace`);
    const ext = extname(name).toLowerCase();
    // Streamed from the file: read whole (and copied once more), a 1.5 GB video linked as an image cost
    // 3 GB of the kernel's memory each time a note showing it was opened. Opened first, its size taken
    // from what is open and no more sent (a file changed meanwhile cut the answer short of its length).
    const handle = await open(found.path, 'r').catch(() => undefined);
    if (!handle) throw new NotFoundError('NOT_FOUND', `no attachment '${name}' in the workspace`);
    // Regular files only, by the file opened (checked once, not before the open too).
    const info = await handle.stat().catch(async (error: unknown) => { await handle.close(); throw error; });
    if (!info.isFile()) {
      await handle.close();
      throw new NotFoundError('NOT_FOUND', `no attachment '${name}' in the workspace`);
    }
    const size = info.size;
    // A HEAD is answered from the GET's handler without its body: a stream opened for it was never read,
    // and each such request kept a file open for good.
    const headers = {
      'content-length': String(size),
      'content-type': IMAGES.has(ext) || ext === '.pdf' ? TYPES[ext]! : 'application/octet-stream',
      'content-disposition': IMAGES.has(ext) ? 'inline' : 'attachment',
      'content-security-policy': "default-src 'none'; sandbox",
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=3600',
    };
    if (c.req.method === 'HEAD' || size === 0) {
      await handle.close();
      return c.req.method === 'HEAD' ? c.body(null, 200, headers) : c.body('', 200, headers);
    }
    return c.body(Readable.toWeb(handle.createReadStream({ start: 0, end: size - 1 })) as ReadableStream<Uint8Array>, 200, headers);
  });
  return app;
}

/**
 * A file under the workspace's `assets/`, by where it really is: a symbolic link there (a synced or
 * cloned workspace may hold one) leading out of `assets/` served the file it led to. No hidden segment
 * (`sub/.env`), regular files only.
 */
async function attachmentFile(workspaceRoot: string, name: string): Promise<{ path: string } | undefined> {
  if (name.split(/[/\\]/).some((segment) => segment.startsWith('.'))) return undefined;
  const root = await realpath(resolve(workspaceRoot, 'assets')).catch(() => undefined);
  const path = root === undefined ? undefined : await realpath(resolve(root, name)).catch(() => undefined);
  if (root === undefined || path === undefined || !path.startsWith(`${root}${sep}`)) return undefined;
  // Where it leads must be no hidden file either (a link `alias.png` to `assets/.env`).
  if (path.slice(root.length + 1).split(sep).some((segment) => segment.startsWith('.'))) return undefined;
  return { path };
}
