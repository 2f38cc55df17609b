import type { QuireClient } from '../../../core/client/quire-client.js';
import { safeDecode } from '../api.js';

/**
 * Images of the workspace (`assets/…`) need the token, which an <img> cannot send: each is fetched
 * with it and shown from a blob URL. A reader, who may not read them, sees the alt text.
 */
const cache = new Map<string, Promise<string | undefined>>();

/** Forgets the images (on sign-out: the next person may not read them), and frees their memory. */
export function forgetAssets(): void {
  for (const url of cache.values()) void url.then((src) => { if (src) URL.revokeObjectURL(src); });
  cache.clear();
}

export async function loadAssets(client: QuireClient, root: HTMLElement): Promise<void> {
  for (const img of root.querySelectorAll<HTMLImageElement>('img[data-asset]')) {
    const path = img.dataset.asset!;
    let url = cache.get(path);
    if (!url) {
      const fetching = client.request('getAsset', { params: { name: safeDecode(path.slice('assets/'.length)) } })
        .then(async (response) => (response.ok ? URL.createObjectURL(await response.blob()) : undefined), () => undefined);
      // Only an image read is kept: a failure (the network, a restart) is tried again at the next render.
      void fetching.then((src) => { if (!src && cache.get(path) === fetching) cache.delete(path); });
      url = fetching;
      cache.set(path, url);
    }
    const src = await url;
    // The element stays Preact's (replacing it broke later renders of the block): without its image it
    // shows its alt text, said to be an image; the note's own alt is kept to put back.
    img.dataset.alt ??= img.alt;
    if (src) {
      img.src = src;
      img.alt = img.dataset.alt;
      img.classList.remove('image-off');
    } else {
      img.removeAttribute('src');
      img.alt = `[image: ${img.dataset.alt || path}]`;
      img.classList.add('image-off');
    }
  }
}
