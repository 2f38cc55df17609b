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
}

export function savedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Checks a token against the kernel and learns its role (an admin may read the gate, a reader may not). */
export async function signIn(token: string): Promise<Session> {
  const client = createQuireClient({ baseUrl: '', token });
  await client.call('listPlugins');
  const role = await client.call('gate').then(() => 'admin' as const, (error: unknown) => {
    if (error instanceof QuireApiError && error.status === 403) return 'reader' as const;
    throw error;
  });
  sessionStorage.setItem(TOKEN_KEY, token);
  return { client, role, token };
}

export { QuireApiError };

/** A short sentence for an error shown to the person. */
export function describe(error: unknown): string {
  if (error instanceof QuireApiError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
