import { describe, expect, it } from 'vitest';
import { canonicalJson, hashArguments } from '../../../core/canonical-json.js';
import { redact } from '../../../core/log.js';

describe('canonical JSON', () => {
  it('gives equal text for equal values whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
    expect(hashArguments({ x: 1, y: 2 })).toBe(hashArguments({ y: 2, x: 1 }));
  });

  it('keeps a "__proto__" key, so arguments carrying one never hash like arguments without it', () => {
    const sneaky = JSON.parse('{"path":"x","__proto__":{"recursive":true}}') as unknown;
    expect(hashArguments(sneaky)).not.toBe(hashArguments({ path: 'x' }));
    expect(canonicalJson(sneaky)).toBe('{"__proto__":{"recursive":true},"path":"x"}');
  });

  it('redacts without losing or acting on a "__proto__" key', () => {
    const value = JSON.parse('{"__proto__":{"token":"t"},"a":1}') as unknown;
    expect(JSON.stringify(redact(value))).toBe('{"__proto__":{"token":"[redacted]"},"a":1}');
  });
});
