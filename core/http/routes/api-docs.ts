import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SwaggerUI, swaggerUI } from '@hono/swagger-ui';
import { Hono } from 'hono';
import { NotFoundError } from '../../errors.js';
import type { Kernel } from '../../kernel.js';
import { KERNEL_VERSION } from '../../paths.js';
import type { HttpEnv } from '../http-env.js';
import { inlineScriptHashes, pageSecurity } from '../middleware/page-security.js';
import { buildOpenApiDocument } from '../openapi/build-document.js';

const ASSETS_BASE = '/api/docs/assets';
const DOCS_OPTIONS = { url: '/api/openapi.json', baseUrl: ASSETS_BASE, title: 'Quire kernel API', deepLinking: true } as const;
/** The files of swagger-ui-dist the page loads; nothing else of that folder is served. */
// A Map: a name from the URL looked up in an object literal found `constructor` and `__proto__` (a 500 without a token).
const ASSETS: ReadonlyMap<string, string> = new Map([['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'], ['swagger-ui.css', 'text/css; charset=utf-8']]);

/**
 * `GET /api/openapi.json`, the OpenAPI 3.1 document of what is served now (core routes and the
 * actions of the active plugins), and `GET /api/docs`, Swagger UI over it (`@hono/swagger-ui`) with
 * its files served from the package, not a CDN: the kernel works offline and its pages load nothing
 * from elsewhere. Neither holds notes or secrets, so both answer without a token (a browser cannot
 * send one to open a page); the page's "Authorize" takes the token for trying calls. Host and Origin
 * are still checked, and no CORS header lets another site read them.
 */
export function apiDocsRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const distFolder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const security = pageSecurity(inlineScriptHashes(SwaggerUI(DOCS_OPTIONS)));
  // Built once per set of actions (a plugin enabled or disabled changes it), not per request.
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  kernel.registry.onChange(() => { document = undefined; });
  app.get('/openapi.json', (c) => c.json(document ??= buildOpenApiDocument({ version: KERNEL_VERSION, actions: kernel.registry.list() })));
  app.get('/docs', security, swaggerUI(DOCS_OPTIONS));
  app.get('/docs/assets/swagger-ui-dist/:file', security, async (c) => {
    const file = c.req.param('file');
    const type = ASSETS.get(file);
    if (type === undefined) throw new NotFoundError('NOT_FOUND', `no asset '${file}'`);
    const bytes = cache.get(file) ?? await readFile(join(distFolder, file));
    cache.set(file, bytes);
    return c.body(new Uint8Array(bytes), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
  return app;
}
