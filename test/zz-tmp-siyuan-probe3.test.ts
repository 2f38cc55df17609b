import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { siyuanToDrafts } from '../plugins/blocks/siyuan-sy.js';
import { blocksToMarkdown } from '../plugins/blocks/markdown-out.js';
it('dump', () => {
  for (const f of ['20200924101106-19z4kaa', '20240530101000-xsbxokr']) {
    const doc = siyuanToDrafts(JSON.parse(readFileSync(`test/fixtures/siyuan/${f}.sy`, 'utf8')));
    console.log(JSON.stringify({ ...doc, children: undefined }, null, 1));
    console.log(JSON.stringify(doc.children, null, 1).slice(0, 2500));
    console.log(blocksToMarkdown(doc.children));
  }
});
