import { useEffect, useRef, useState } from 'preact/hooks';
import { createQuireClient, QuireApiError, type QuireClient } from '../../core/client/quire-client.js';

/**
 * The signed-in person's client. The token is kept in this tab's session storage only: never in a URL,
 * a cookie or local storage, and gone when the tab closes.
 */
const TOKEN_KEY = 'quire.token';

export interface Session {
  client: QuireClient;
  role: 'admin' | 'reader';
  token: string;
  name: string;
}

export function savedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Checks a token against the kernel and learns whose it is and its role. */
export async function signIn(token: string): Promise<Session> {
  const client = createQuireClient({ baseUrl: '', token });
  const me = await client.call('me');
  sessionStorage.setItem(TOKEN_KEY, token);
  return { client, role: me.role === 'admin' ? 'admin' : 'reader', token, name: me.name };
}

export { QuireApiError };

/** A short sentence for an error shown to the person. */
export function describe(error: unknown): string {
  if (error instanceof QuireApiError) return `${error.message} (${error.code})`;
  // The browser's word for no answer at all ("Failed to fetch"): the kernel is down or unreachable.
  if (error instanceof TypeError && /fetch|network/i.test(error.message)) return `The kernel cannot be reached: is quire serve running, and is this its address? (${error.message})`;
  return error instanceof Error ? error.message : String(error);
}

/** Loads a value when `deps` change: the value, the error said, and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [T | undefined, string | undefined, () => void] {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  // Only the latest load's answer is shown: an earlier one answered later (a list read again at each change) showed what was before.
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    load().then((result) => { if (ticket === latest.current) { setValue(result); setError(undefined); } }, (e: unknown) => { if (ticket === latest.current) setError(describe(e)); });
  }, [...deps, tick]);
  return [value, error, () => setTick(tick + 1)];
}

/** Percent-encoded text (a hash, a link's file name) decoded; a stray `%` leaves it as it is. */
export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
