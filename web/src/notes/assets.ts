import type { QuireClient } from '../../../core/client/quire-client.js';
import { safeDecode } from '../api.js';

/**
 * Images of the workspace (`assets/…`) need the token, which an <img> cannot send: each is fetched
 * with it and shown from a blob URL (an SVG from a data: URL). A reader, who may not read them, sees the alt text.
 */
interface Cached {
  url: Promise<string | undefined>;
  bytes: number;
  /** Refused for good (missing, or not the reader's to see): not asked again at every render. */
  refused?: boolean;
}

/**
 * The images fetched, the most recently used last. Bounded: a long session of image-heavy documents
 * held every image's bytes until sign-out. An evicted image's URL is revoked (an <img> still showing
 * it keeps its decoded picture; it is fetched again at its next render).
 */
const cache = new Map<string, Cached>();
const MAX_BYTES = 64 * 2 ** 20;
const MAX_IMAGES = 500;
/** Changes at sign-out: an image arriving after it is not kept (the next person may not read it). */
let generation = 0;

/** Forgets the images (on sign-out: the next person may not read them), and frees their memory. */
export function forgetAssets(): void {
  generation++;
  for (const cached of cache.values()) revoke(cached);
  cache.clear();
}

function revoke(cached: Cached): void {
  void cached.url.then((src) => { if (src?.startsWith('blob:')) URL.revokeObjectURL(src); });
}

function dataUrl(blob: Blob): Promise<string | undefined> {
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(typeof reader.result === 'string' ? reader.result : undefined);
    reader.onerror = () => resolve(undefined);
    reader.readAsDataURL(blob);
  });
}

function evict(): void {
  let bytes = 0;
  for (const cached of cache.values()) bytes += cached.bytes;
  for (const [path, cached] of cache) {
    if (cache.size <= MAX_IMAGES && bytes <= MAX_BYTES) break;
    cache.delete(path);
    bytes -= cached.bytes;
    revoke(cached);
  }
}

function fetchAsset(client: QuireClient, path: string): Promise<string | undefined> {
  const known = cache.get(path);
  if (known) {
    cache.delete(path);
    cache.set(path, known);
    return known.url;
  }
  const started = generation;
  const cached: Cached = { url: Promise.resolve(undefined), bytes: 0 };
  cached.url = client.request('getAsset', { params: { name: safeDecode(path.slice('assets/'.length)) } })
    .then(async (response) => {
      if (!response.ok) {
        // 4xx but a time-out or a rate limit will answer the same again: a reader's 403 for each image
        // of a document, or 1,000 missing files, were asked for again at every render of the page.
        cached.refused = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
        return undefined;
      }
      // Only an image, and not one larger than the cache itself: `![x](assets/talk.mp4)` fetched the
      // whole video into the tab's memory before it could be seen not to be an image.
      const type = response.headers.get('content-type') ?? '';
      const size = Number(response.headers.get('content-length') ?? '0');
      // An SVG is served as bytes (never as a page), typed as an image below.
      if ((!type.startsWith('image/') && !/\.svg$/i.test(path)) || size > MAX_BYTES) {
        void response.body?.cancel().catch(() => undefined);
        cached.refused = true;
        return undefined;
      }
      const fetched = await response.blob();
      const svg = /\.svg$/i.test(path) || /^image\/svg\+xml\b/i.test(fetched.type);
      // An SVG can hold script. Drawn by an <img> it runs none, but a blob: URL has the app's origin:
      // opened on its own (Open image in new tab) its script ran there, beside the token. A data: URL
      // has an opaque origin, and browsers do not open an SVG one as a page.
      const url = svg ? await dataUrl(new Blob([fetched], { type: 'image/svg+xml' })) : URL.createObjectURL(fetched);
      // Signed out meanwhile: not kept, and not shown.
      if (started !== generation || url === undefined) {
        if (url?.startsWith('blob:')) URL.revokeObjectURL(url);
        return undefined;
      }
      // What it takes in memory (base64 is a third larger than the bytes).
      cached.bytes = svg ? url.length : fetched.size;
      return url;
    }, () => undefined);
  cache.set(path, cached);
  // An image read is kept, and so is a refusal; another failure (the network, a restart) is tried again at the next render.
  void cached.url.then((src) => {
    if (!src && !cached.refused && cache.get(path) === cached) cache.delete(path);
    else if (src) evict();
  });
  return cached.url;
}

/** Shows the images under `root`, all fetched at once; cheap to call after every render (fetched images are kept). */
export async function loadAssets(client: QuireClient, root: HTMLElement): Promise<void> {
  await Promise.all([...root.querySelectorAll<HTMLImageElement>('img[data-asset]')].map(async (img) => {
    const path = img.dataset.asset!;
    const src = await fetchAsset(client, path);
    // The element may show another image by now (Preact reuses it when a block changes): that one's render sets it.
    if (img.dataset.asset !== path) return;
    // The element stays Preact's (replacing it broke later renders of the block); the note's own alt is
    // in data-alt (Preact keeps it up to date): without its image it shows that, said to be an image.
    const alt = img.dataset.alt ?? '';
    if (src) {
      // An SVG's data: URL is its whole text, copied at each read of the attribute: compared by the path
      // shown (it is never revoked); a blob: URL by itself (an image fetched again after eviction has a new one).
      const shown = src.startsWith('data:') ? img.dataset.shown === path && img.hasAttribute('src') : img.getAttribute('src') === src;
      if (!shown) { img.src = src; img.dataset.shown = path; }
      img.alt = alt;
      img.classList.remove('image-off');
    } else {
      img.removeAttribute('src');
      delete img.dataset.shown;
      img.alt = `[image: ${alt || path}]`;
      img.classList.add('image-off');
    }
  }));
}
