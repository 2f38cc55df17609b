import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Authenticator } from '../../../core/auth/authenticator.js';
import { createLogger, redact } from '../../../core/log.js';

const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

describe('authentication', () => {
  it('maps a token to its name and role, from a digest or from the environment', () => {
    const auth = new Authenticator({ auth: { tokens: [
      { name: 'admin', role: 'admin', sha256: sha('a-token') },
      { name: 'ci', role: 'reader', env: 'QUIRE_TEST_READER' },
    ] } }, { QUIRE_TEST_READER: 'r-token' });
    expect(auth.authenticate('a-token')).toEqual({ kind: 'person', name: 'admin', role: 'admin' });
    expect(auth.authenticate('r-token')).toEqual({ kind: 'person', name: 'ci', role: 'reader' });
    expect(auth.authenticate('a-token ')).toBeUndefined();
    expect(auth.authenticate('')).toBeUndefined();
  });

  it('ignores an entry whose environment variable is unset, so an empty token never matches', () => {
    const auth = new Authenticator({ auth: { tokens: [{ name: 'ci', role: 'reader', env: 'QUIRE_TEST_UNSET' }] } }, {});
    expect(auth.size).toBe(0);
    expect(auth.authenticate('')).toBeUndefined();
  });
});

describe('logging', () => {
  it('never writes secret-looking fields', () => {
    const lines: string[] = [];
    const log = createLogger({ sink: { write: (line) => lines.push(line) } });
    log.info('request', { headers: { Authorization: 'Bearer qk_secret' }, apiKey: 'sk-1', nested: { token: 't' }, path: '/x' });
    expect(lines.join('')).not.toContain('qk_secret');
    expect(lines.join('')).not.toContain('sk-1');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ path: '/x', apiKey: '[redacted]' });
    expect(redact({ list: [{ password: 'p' }] })).toEqual({ list: [{ password: '[redacted]' }] });
  });
});
