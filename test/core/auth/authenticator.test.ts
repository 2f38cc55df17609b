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
    ] } }, { QUIRE_TEST_READER: 'r-token-of-twenty-characters' });
    expect(auth.authenticate('a-token')).toEqual({ kind: 'person', name: 'admin', role: 'admin' });
    expect(auth.authenticate('r-token-of-twenty-characters')).toEqual({ kind: 'person', name: 'ci', role: 'reader' });
    expect(auth.authenticate('a-token ')).toBeUndefined();
    expect(auth.authenticate('')).toBeUndefined();
  });

  it('ignores an entry whose environment variable is unset, so an empty token never matches', () => {
    const auth = new Authenticator({ auth: { tokens: [{ name: 'ci', role: 'reader', env: 'QUIRE_TEST_UNSET' }] } }, {});
    expect(auth.size).toBe(0);
    expect(auth.authenticate('')).toBeUndefined();
  });

  it('ignores a token from the environment too short to be a secret (a configuration problem says so)', () => {
    const auth = new Authenticator({ auth: { tokens: [{ name: 'ci', role: 'reader', env: 'QUIRE_TEST_SHORT' }] } }, { QUIRE_TEST_SHORT: 'x' });
    expect([auth.size, auth.authenticate('x')]).toEqual([0, undefined]);
  });
});

describe('authentication by header', () => {
  const auth = new Authenticator({ auth: { tokens: [
    { name: 'admin', role: 'admin', sha256: sha('a-token') },
    { name: 'reader', role: 'reader', sha256: sha('r-token') },
  ] } }, {});

  it('answers as authenticate does for the token in a Bearer header, however often it is sent', () => {
    for (let round = 0; round < 3; round++) {
      expect(auth.authenticateHeader('Bearer a-token')).toEqual({ kind: 'person', name: 'admin', role: 'admin' });
      expect(auth.authenticateHeader('bearer   r-token ')).toEqual({ kind: 'person', name: 'reader', role: 'reader' });
      expect(auth.authenticateHeader('Bearer a-token2')).toBeUndefined();
      expect(auth.authenticateHeader('Bearer a-toke')).toBeUndefined();
      expect(auth.authenticateHeader('a-token')).toBeUndefined();
      expect(auth.authenticateHeader('Basic a-token')).toBeUndefined();
      expect(auth.authenticateHeader('Bearer a-token, Bearer a-token')).toBeUndefined();
      expect(auth.authenticateHeader('Bearer')).toBeUndefined();
      expect(auth.authenticateHeader('')).toBeUndefined();
    }
  });

  it('gives each caller a principal of its own, and still answers past the headers it keeps', () => {
    const first = auth.authenticateHeader('Bearer a-token');
    expect(first).not.toBe(auth.authenticateHeader('Bearer a-token'));
    // Spellings of the same token (case of "Bearer", spaces) are distinct headers: more than are kept.
    for (let spaces = 1; spaces <= 100; spaces++) {
      expect(auth.authenticateHeader(`Bearer${' '.repeat(spaces)}a-token`)?.name).toBe('admin');
      expect(auth.authenticateHeader(`Bearer${' '.repeat(spaces)}wrong-${spaces}`)).toBeUndefined();
    }
    expect(auth.headerDigest('Bearer a-token')?.toString('hex')).toBe(sha('a-token'));
    expect(auth.headerDigest('Bearer other')?.toString('hex')).toBe(sha('other'));
    expect(auth.headerDigest('Token x')).toBeUndefined();
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
