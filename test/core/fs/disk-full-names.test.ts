import { describe, expect, it } from 'vitest';
import { describeWrite, diskFull, isDiskFull } from '../../../core/fs/disk-full.js';
import { KernelError } from '../../../core/errors.js';

const errno = (code: string): Error => Object.assign(new Error(code), { code });

describe('naming what a full disk stopped', () => {
  it('names workspace files by kind and workspace path, reading the path from its end', () => {
    const ws = '/srv/data/notes/ws';
    expect(describeWrite(`${ws}/data/20260101000000-abcdefg/20260101000000-bcdefgh.json`)).toEqual({ what: 'document', file: 'data/20260101000000-abcdefg/20260101000000-bcdefgh.json' });
    expect(describeWrite(`${ws}/data/20260101000000-abcdefg/.notebook.json`).what).toBe('notebook settings');
    expect(describeWrite(`${ws}/repo/objects/ab/${'ab'.repeat(32)}`).what).toBe('snapshot object');
    expect(describeWrite(`${ws}/repo/snapshots/20260101000000-abcdefg.json`).what).toBe('snapshot record');
    expect(describeWrite(`${ws}/agent/sessions/20260101000000-abcdefg/session.json`)).toEqual({ what: 'session', file: 'agent/sessions/20260101000000-abcdefg/session.json' });
    expect(describeWrite(`${ws}/jobs/20260101000000-abcdefg.json`).what).toBe('job record');
    expect(describeWrite(`${ws}/audit/audit.head.json`).what).toBe('audit head');
    expect(describeWrite(`${ws}/.quire/kernel.lock`).what).toBe('workspace lock');
    expect(describeWrite('/home/me/export/notes.md')).toEqual({ what: 'file', file: '/home/me/export/notes.md' });
  });

  it('maps ENOSPC, EDQUOT and SQLITE_FULL, also as a cause, and leaves other errors and an earlier DISK_FULL alone', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'SQLITE_FULL']) expect((diskFull(errno(code), { what: 'index', file: 'index/quire.db' }) as KernelError).code).toBe('DISK_FULL');
    expect(isDiskFull(new Error('wrapped', { cause: errno('ENOSPC') }))).toBe(true);
    const other = errno('EACCES');
    expect(diskFull(other, { what: 'index', file: 'x' })).toBe(other);
    const first = diskFull(errno('ENOSPC'), { what: 'document', file: 'data/a.json' });
    expect(diskFull(first, { what: 'file', file: 'elsewhere' })).toBe(first);
    expect((first as KernelError).details).toMatchObject({ what: 'document', file: 'data/a.json', reason: 'ENOSPC' });
  });
});
