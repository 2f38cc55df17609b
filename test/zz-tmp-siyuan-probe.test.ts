import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'vitest';
import type { DraftBlock } from '../plugins/blocks/block-model.js';
import { siyuanToDrafts } from '../plugins/blocks/siyuan-sy.js';
import { blocksToMarkdown } from '../plugins/blocks/markdown-out.js';
import { markdownToBlocks } from '../plugins/blocks/markdown-in.js';
import { inlineToPlain } from '../plugins/blocks/inline-syntax.js';
function files(d: string, out: string[] = []): string[] { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) files(p, out); else if (p.endsWith('.sy')) out.push(p); } return out; }
const flat = (bs: DraftBlock[], out: DraftBlock[] = []): DraftBlock[] => { for (const b of bs) { out.push(b); flat(b.children ?? [], out); } return out; };
it('all guide files', () => {
  const problems = new Map<string, number>();
  let mismatches = 0, blocks = 0;
  for (const f of files('/tmp/sy/app/guide')) {
    const doc = siyuanToDrafts(JSON.parse(readFileSync(f, 'utf8')));
    for (const p of doc.problems) { const k = p.replace(/\d{14}-[0-9a-z]{7}/g, 'ID').replace(/\d+ superblocks?/, 'N superblocks').slice(0, 140); problems.set(k, (problems.get(k) ?? 0) + 1); }
    const md = blocksToMarkdown(doc.children);
    const back = flat(markdownToBlocks(md, () => 'x'));
    const mine = flat(doc.children).filter((b) => !(['paragraph','table','html','embed'].includes(b.type) && (b.content ?? '').trim() === ''));
    blocks += mine.length;
    if (back.length !== mine.length) { mismatches++; if (mismatches < 4) console.log('COUNT', f, mine.length, back.length); continue; }
    for (let i = 0; i < mine.length; i++) {
      const a = mine[i]!, b = back[i]!;
      if (a.type !== b.type || (a.content ?? '') !== (b.content ?? '') || (a.subtype ?? '') !== (b.subtype ?? '')) { mismatches++; if (mismatches < 15) console.log('DIFF', f.split('/').pop(), JSON.stringify(a).slice(0, 300), '\n   =>', JSON.stringify(b).slice(0, 300)); }
    }
  }
  console.log('blocks', blocks, 'mismatches', mismatches);
  console.log([...problems].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`).join('\n'));
});
