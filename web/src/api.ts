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
  return error instanceof Error ? error.message : String(error);
}
