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
      url = client.request('getAsset', { params: { name: safeDecode(path.slice('assets/'.length)) } })
        .then(async (response) => (response.ok ? URL.createObjectURL(await response.blob()) : undefined), () => undefined);
      cache.set(path, url);
    }
    const src = await url;
    if (src) img.src = src;
    else img.replaceWith(Object.assign(document.createElement('span'), { className: 'image-off', textContent: `[image: ${img.alt || path}]` }));
  }
}
