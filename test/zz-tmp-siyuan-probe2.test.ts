import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'vitest';
import { siyuanToDrafts } from '../plugins/blocks/siyuan-sy.js';
import { inlineToPlain } from '../plugins/blocks/inline-syntax.js';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import { toString } from 'mdast-util-to-string';
function files(d: string, out: string[] = []): string[] { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) files(p, out); else if (p.endsWith('.sy')) out.push(p); } return out; }
const proc = unified().use(remarkParse).use(remarkGfm).use(remarkMath);
const dec = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&#39;/g, "'").replace(/&#124;/g, '|').replace(/&amp;/g, '&');
it('plain text agrees', () => {
  let checked = 0, bad = 0, badRemark = 0;
  for (const f of files('/tmp/sy/app/guide')) {
    const json = JSON.parse(readFileSync(f, 'utf8'));
    const doc = siyuanToDrafts(json);
    const byId = new Map<string, string>();
    (function walk(bs: any[]) { for (const b of bs) { if (b.type === 'paragraph' && b.id) byId.set(b.id, b.content); walk(b.children ?? []); } })(doc.children);
    (function walk(n: any) {
      if (n.Type === 'NodeParagraph' && byId.has(n.ID)) {
        const ks = n.Children ?? [];
        if (ks.every((k: any) => k.Type === 'NodeText' || (k.Type === 'NodeTextMark' && /^(strong|em|s|u|mark|sup|sub|kbd|code|a|text|tag|block-ref)( (strong|em|s|u|mark|sup|sub|kbd|code|text))*$/.test(k.TextMarkType)))) {
          const expected = ks.map((k: any) => (k.Type === 'NodeText' ? k.Data : dec(k.TextMarkTextContent ?? ''))).join('').replace(/\u200b/g, '').replace(/\s+/g, ' ').trim();
          const content = byId.get(n.ID)!;
          const plain = inlineToPlain(content).replace(/\s+/g, ' ').trim();
          checked++;
          if (plain !== expected) { bad++; if (bad < 8) console.log('PLAIN', JSON.stringify(expected).slice(0, 200), '\n  content', JSON.stringify(content).slice(0, 200), '\n  plain  ', JSON.stringify(plain).slice(0, 200)); }
          if (!ks.some((k: any) => /tag|block-ref/.test(k.TextMarkType ?? ''))) {
            const tree: any = proc.parse(content); (function strip(n: any) { if (n.children) n.children = n.children.filter((c: any) => c.type !== 'html').map((c: any) => (strip(c), c)); })(tree); const r = toString(tree).replace(/\s+/g, ' ').trim();
            if (r !== expected) { badRemark++; if (badRemark < 8) console.log('REMARK', JSON.stringify(expected).slice(0, 200), '\n  content', JSON.stringify(content).slice(0, 200), '\n  remark ', JSON.stringify(r).slice(0, 200)); }
          }
        }
      }
      for (const c of n.Children ?? []) walk(c);
    })(json);
  }
  console.log('checked', checked, 'bad', bad, 'badRemark', badRemark);
});
