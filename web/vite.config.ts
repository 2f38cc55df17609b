import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web app, built into dist/web and served by the kernel (core/http/routes/web-app.ts) under a CSP
 * with no inline script and no eval: Preact with htm (tagged templates, no JSX step), no runtime CDN.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
