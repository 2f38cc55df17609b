import { describe, expect, it } from 'vitest';
import { getForeignSchemaAjv } from '../../../core/manifest/manifest-schema.js';
import { toRe2Syntax } from '../../../core/schema/linear-regexp.js';

describe('patterns of schemas the kernel did not write', () => {
  it('checks each schema with its own pattern (ajv keeps compiled patterns by their text)', () => {
    const ajv = getForeignSchemaAjv();
    const a = ajv.compile({ type: 'string', pattern: '^a+$' });
    const b = ajv.compile({ type: 'string', pattern: '^b+$' });
    const caseless = ajv.compile({ type: 'string', pattern: '(?i)^B+$' });
    expect([a('aa'), b('bb'), b('aa'), caseless('bbB')]).toEqual([true, true, false, true]);
  });

  it('answers a nested quantifier over a long hostile text (hours for a backtracking engine)', () => {
    const nested = getForeignSchemaAjv().compile({ type: 'string', pattern: '^([a-z0-9]+\\s?)*$' });
    expect(nested(`${'a'.repeat(5000)}?`)).toBe(false);
    expect(nested('plain words here')).toBe(true);
  });

  it('refuses a pattern RE2 cannot run, naming it', () => {
    expect(() => getForeignSchemaAjv().compile({ type: 'string', pattern: '^(a)\\1$' })).toThrow(/\\1/);
  });

  it('writes JavaScript\'s \\u escapes as RE2 reads them, leaving escaped backslashes alone', () => {
    expect(toRe2Syntax('^[\\u4e00-\\u9fa5]+$')).toBe('^[\\x{4e00}-\\x{9fa5}]+$');
    expect(toRe2Syntax('\\u{1F600}')).toBe('\\x{1F600}');
    expect(toRe2Syntax('\\\\u0041')).toBe('\\\\u0041');
  });
});
