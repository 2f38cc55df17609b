import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toString } from 'mdast-util-to-string';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import type { DraftBlock } from '../../../plugins/blocks/block-model.js';
import { inlineToPlain, parseRefs, parseTags } from '../../../plugins/blocks/inline-syntax.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { blocksToMarkdown } from '../../../plugins/blocks/markdown-out.js';
import { siyuanStamp, siyuanToDrafts, type SiyuanDocument } from '../../../plugins/blocks/siyuan-sy.js';
import { REPO_ROOT } from '../../helpers/harness.js';

/**
 * Fixtures: three documents with SiYuan's real structure (the shape of documents of its user guide), all
 * their text written for Quire: node types, ids, properties and encoding are as SiYuan writes them.
 */
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'siyuan');
const raw = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
/** 版面样例 ("Layout samples", zh): every block type and inline mark. */
const TYPESETTING = '20200825162036-4dx365o.sy';
/** "Notes on a Trip Journal" (en): a memo, tags, refs, a query embed. */
const CONTENT_BLOCK = '20200924101106-19z4kaa.sy';
/** キーボード操作 ("Keyboard actions", ja): a document attribute, a table of kbd spans and line breaks. */
const SHORTCUTS = '20240530101000-xsbxokr.sy';

function flatten(blocks: readonly DraftBlock[], out: DraftBlock[] = []): DraftBlock[] {
  for (const block of blocks) {
    out.push(block);
    flatten(block.children ?? [], out);
  }
  return out;
}

const byId = (doc: SiyuanDocument, id: string): DraftBlock => {
  const block = flatten(doc.children).find((b) => b.id === id);
  if (!block) throw new Error(`no block ${id}`);
  return block;
};

/** Every block `ID` of a `.sy` tree, in document order (a code block's code and a formula's TeX have ids of their own). */
function syIds(node: unknown, out: string[] = []): string[] {
  const n = node as { ID?: string; Type?: string; Children?: unknown[] };
  if (typeof n.ID === 'string' && n.Type !== 'NodeCodeBlockCode' && n.Type !== 'NodeMathBlockContent') out.push(n.ID);
  for (const child of n.Children ?? []) syIds(child, out);
  return out;
}

/** A document of the given block nodes, with the typesetting fixture's head. */
function docWith(...children: unknown[]): Record<string, unknown> {
  return { ...raw(TYPESETTING), Children: children };
}

const para = (id: string, ...inline: unknown[]): Record<string, unknown> => ({ ID: id, Type: 'NodeParagraph', Properties: { id }, Children: inline });
const textNode = (data: string): Record<string, unknown> => ({ Type: 'NodeText', Data: data });

describe('siyuanToDrafts on documents shaped like SiYuan guide documents', () => {
  const doc = siyuanToDrafts(raw(TYPESETTING));

  it('keeps the document id and title, and copies none of icon, title-img, type or title as attributes', () => {
    expect(doc.id).toBe('20200825162036-4dx365o');
    expect(doc.title).toBe('版面样例');
    expect(doc.attrs).toEqual({ created: '2020-08-25T16:20:36.000Z', updated: '2026-06-16T22:42:29.000Z' });
  });

  it('keeps every block id but those of the flattened superblocks', () => {
    const superblocks = ['20210604234955-651jbge', '20210604234946-4tvu1br', '20210604234949-meouz74'];
    const expected = syIds(raw(TYPESETTING)).slice(1).filter((id) => !superblocks.includes(id));
    expect(flatten(doc.children).map((b) => b.id)).toEqual(expected);
    expect(doc.problems).toEqual([expect.stringMatching(/^3 superblocks .*flattened.*20210604234955-651jbge/)]);
  });

  it('maps headings, lists, tasks, quotes, callouts, code, tables, HTML, rules, math and media', () => {
    expect(byId(doc, '20210604182832-nm3hapx')).toMatchObject({ type: 'heading', subtype: 'h2', content: '行内样式' });
    const ordered = byId(doc, '20210104091228-90lv391');
    expect(ordered).toMatchObject({ type: 'list', subtype: 'ordered' });
    expect(ordered.start).toBeUndefined();
    expect(ordered.children![0]!.children!.map((b) => [b.type, b.subtype, b.content])).toEqual([
      ['paragraph', undefined, 'Python'], ['list', 'ordered', undefined]]);
    const tasks = byId(doc, '20210104091228-4uwvws7');
    expect(tasks.subtype).toBe('task');
    expect(tasks.children!.map((item) => [item.type, item.subtype, item.checked, item.children![0]!.content])).toEqual([
      ['listItem', 'task', true, '整理书架'], ['listItem', 'task', false, '给花浇水']]);
    expect(byId(doc, '20210604223030-6gapuyv')).toMatchObject({ type: 'blockquote', children: [{ type: 'paragraph', content: '这是一段引文，左侧那条竖线只是它的外观（样式）。' }] });
    expect(byId(doc, '20251211093951-xtkv05z')).toMatchObject({ type: 'callout', subtype: 'note', attrs: { 'custom-callout-title': 'Reminder' }, children: [{ content: '周五之前记得把草稿发给编辑过目。' }] });
    expect(byId(doc, '20251211093951-fe1g5ac')).toMatchObject({ type: 'callout', subtype: 'caution' });
    const code = byId(doc, '20210104091228-mwb2x54');
    expect(code).toMatchObject({ type: 'code', subtype: 'go' });
    expect(code.content).toBe('package main\n\nimport "fmt"\n\nfunc main() {\n\tfor i := 1; i <= 3; i++ {\n\t\tfmt.Println("第", i, "行")\n\t}\n}');
    expect(byId(doc, '20210104091228-eem86ni').content).toBe('| fruit | colour |\n| --- | --- |\n| plum | purple |\n| lime | green |');
    expect(byId(doc, '20220312004517-f6i1k8m')).toMatchObject({ type: 'html', content: expect.stringMatching(/^<div>\n<ruby>/) });
    expect(byId(doc, '20210604222430-tctcbzh').type).toBe('thematicBreak');
    expect(byId(doc, '20210104091228-9ok9gv4')).toMatchObject({ type: 'math', content: expect.stringMatching(/^\\frac\{1\}\{\n/) });
    expect(byId(doc, '20220908200902-6rqv2wt')).toMatchObject({ type: 'html', content: expect.stringMatching(/^<iframe src="https:\/\/player\.bilibili\.com/) });
  });

  it('writes inline marks as Quire Markdown: refs, links, images, strong, tags, code, math', () => {
    const items = byId(doc, '20210104091228-ttcj9nm').children!.map((item) => item.children!.map((b) => b.content));
    expect(items).toEqual([
      ['((20200812220555-lj3enxa "引用某块"))'],
      ['[外部网址](https://example.com)'],
      ['插图', '下面这张小图是 Quire 的标志，放在这里只为检验图片段落能否正确转换。', '![](assets/siyuan-128-20210604092205-djd749a.png)'],
      ['**重点**'],
      ['#灵感#'],
      ['`变量名称`'],
      ['$a^2 + b^2 = \\color{red}c^2$'],
    ]);
    expect(doc.assets).toEqual(['assets/siyuan-128-20210604092205-djd749a.png']);
  });

  it('flattens superblocks in place and makes a one-block query embed a ref', () => {
    const top = doc.children.map((b) => b.content ?? b.type);
    expect(top.slice(2, 7)).toEqual(['红卡片', '黄卡片在中', '蓝卡片', '绿卡片靠右', '((20210428212840-8rqwn5o))']);
    expect(byId(doc, '20210604222515-ggpd5hs').type).toBe('embed');
    expect(doc.refs).toEqual(['20200812220555-lj3enxa', '20210428212840-8rqwn5o']);
    // Presentation-only properties (style) are not attributes.
    expect(byId(doc, '20210604221820-qwdse7i').attrs).toEqual({ created: '2021-06-04T22:18:20.000Z', updated: '2021-06-04T23:49:25.000Z' });
  });

  it('keeps a memo, tags, refs with their anchors, kbd spans and an SQL embed', () => {
    const en = siyuanToDrafts(raw(CONTENT_BLOCK));
    expect(en.problems).toEqual([]);
    expect(byId(en, '20210118104710-sb9ti9s').attrs).toEqual({ created: '2021-01-18T10:47:10.000Z', memo: 'Keep this short: one line will do.' });
    const definition = byId(en, '20210118101709-9lqij9d').content!;
    expect(parseTags(definition)).toEqual(['Field Notes']);
    expect(definition).toContain('`20240315093000-k7m2p9x`');
    expect(parseRefs(byId(en, '20210118104710-sb9ti9s').content!)).toEqual([{ id: '20210106204950-gjw62fp', anchor: 'backlink ' }]);
    expect(byId(en, '20210118104710-2sb91b3').content).toContain('<kbd>Preferences</kbd> - <kbd>Layout</kbd>, and the labelled');
    expect(byId(en, '20210118104710-ymm678p')).toMatchObject({ type: 'embed', content: "SELECT * FROM blocks WHERE memo LIKE '%short%'" });
    expect(en.refs).toEqual(['20210106204950-gjw62fp', '20201117112518-dott91x']);
    expect(byId(en, '20230419153621-jw11s0z').content).toBe('#Idea#:');
  });

  it('keeps a document custom attribute and writes table cells with kbd spans, an escaped backslash, no stray <br>', () => {
    const ja = siyuanToDrafts(raw(SHORTCUTS));
    expect(ja.attrs).toEqual({ created: '2024-05-30T10:10:00.000Z', 'custom-sy-readonly': 'false', updated: '2026-07-15T22:56:15.000Z' });
    const rows = byId(ja, '20240530101000-5z0uafx').content!.split('\n');
    expect(rows.slice(0, 4)).toEqual([
      '| 操作 | キーの組み合わせ | 補足 |',
      '| --- | --- | --- |',
      '| サイドバー切替 | <kbd>Alt</kbd>+<kbd>\\\\</kbd> / <kbd>⌥\\\\</kbd> | |',
      '| 白紙のページを作る | <kbd>Ctrl</kbd>+<kbd>N</kbd> / <kbd>⌘N</kbd> | |',
    ]);
    expect(rows[4]).toBe('| 履歴からページを選んで開く | <kbd>Ctrl</kbd>+<kbd>E</kbd> / <kbd>⌘E</kbd> | |');
  });

  it('gives drafts that Quire writes as Markdown and reads back with the same content', () => {
    for (const name of [TYPESETTING, CONTENT_BLOCK, SHORTCUTS]) {
      const drafts = siyuanToDrafts(raw(name)).children;
      const back = flatten(markdownToBlocks(blocksToMarkdown(drafts), () => 'x'));
      // Media tags are no CommonMark HTML block (<video> is not among them): they read back as a paragraph.
      const shape = (blocks: DraftBlock[]) => blocks.map((b) => [b.type === 'html' && /^<(video|audio)/.test(b.content ?? '') ? 'paragraph' : b.type, b.subtype, b.checked, b.content]);
      expect(shape(back), name).toEqual(shape(flatten(drafts)));
    }
  });
});

describe('siyuanToDrafts on hand-made variations', () => {
  it('keeps custom-* attributes verbatim and name, alias, memo, bookmark under their own names', () => {
    const json = docWith({ ...para('20240101120000-aaaaaaa', textNode('x')),
      Properties: { id: '20240101120000-aaaaaaa', 'custom-priority': 'high', 'custom-note': 'a_esc_newline_b &quot;q&quot; &#123;x&#125;', name: 'Intro', alias: 'a,b', bookmark: '✨', style: 'color: red', fold: '1', updated: '20240101120001' } });
    (json.Properties as Record<string, string>)['custom-reviewed'] = 'yes';
    (json.Properties as Record<string, string>).tags = 'one,two';
    const doc = siyuanToDrafts(json);
    expect(doc.attrs).toEqual({ created: '2020-08-25T16:20:36.000Z', 'custom-reviewed': 'yes', 'custom-siyuan-tags': 'one,two', updated: '2026-06-16T22:42:29.000Z' });
    expect(doc.children[0]!.attrs).toEqual({ created: '2024-01-01T12:00:00.000Z', 'custom-priority': 'high', 'custom-note': 'a\nb "q" {x}', name: 'Intro', alias: 'a,b', bookmark: '✨', updated: '2024-01-01T12:00:01.000Z' });
  });

  it('converts a code span that opens with a blank and is 300,000 characters long, in one pass', () => {
    const long = ` ${'a '.repeat(150_000)}b`;
    const code = { Type: 'NodeTextMark', TextMarkType: 'code', TextMarkTextContent: long };
    const doc = siyuanToDrafts(docWith(para('20240101120000-ddddddd', code)));
    expect(doc.children[0]!.content!.length).toBeGreaterThan(long.length);
  });

  it('converts a paragraph of 80,000 bold spans in one pass (reading the end of the text built so far took the square: 8 s for 40,000)', () => {
    const spans = Array.from({ length: 80_000 }, () => ({ Type: 'NodeTextMark', TextMarkType: 'strong', TextMarkTextContent: 'ab' }));
    const content = siyuanToDrafts(docWith(para('20240101120000-ddddddd', ...spans))).children[0]!.content!;
    // Spans that touch are written so that they stay apart: the first as `**`, the next in its HTML form.
    expect(content.startsWith('**ab**<strong>ab</strong>**ab**')).toBe(true);
    expect(content.split('ab').length - 1).toBe(80_000);
  });

  it('records a problem, not a crash, for unknown block and inline types and a SiYuan database', () => {
    const av = { ID: '20251230141917-1ljqnn4', Type: 'NodeAttributeView', Properties: { 'custom-sy-av-view': '20251230141929-ogkqgga', id: '20251230141917-1ljqnn4', updated: '20251230141929' }, AttributeViewID: '20251230141929-2trv0vl', AttributeViewType: 'table' };
    const doc = siyuanToDrafts(docWith(
      { ID: '20240101120000-bbbbbbb', Type: 'NodeFutureBlock', Children: [textNode('kept '), { Type: 'NodeTextMark', TextMarkType: 'strong', TextMarkTextContent: 'words' }] },
      para('20240101120000-ccccccc', textNode('a '), { Type: 'NodeSparkle', Data: 'b' }, { Type: 'NodeTextMark', TextMarkType: 'glow', TextMarkTextContent: 'c' }),
      av,
    ));
    expect(doc.children.map((b) => [b.id, b.type, b.content])).toEqual([
      ['20240101120000-bbbbbbb', 'paragraph', 'kept words'], ['20240101120000-ccccccc', 'paragraph', 'a bc'], ['20251230141917-1ljqnn4', 'paragraph', '']]);
    expect(doc.children[2]!.attrs).toEqual({ created: '2025-12-30T14:19:17.000Z', 'custom-sy-av-view': '20251230141929-ogkqgga', updated: '2025-12-30T14:19:29.000Z' });
    expect(doc.problems).toEqual([
      expect.stringMatching(/20240101120000-bbbbbbb.*NodeFutureBlock is not known/),
      expect.stringMatching(/20240101120000-ccccccc.*NodeSparkle is not known/),
      expect.stringMatching(/20240101120000-ccccccc.*'glow' is not known/),
      expect.stringMatching(/database \(NodeAttributeView 20251230141929-2trv0vl\)/),
    ]);
  });

  it('gives blocks with a missing, invalid or repeated id none, with a problem each', () => {
    const doc = siyuanToDrafts(docWith({ Type: 'NodeParagraph', Children: [textNode('no id')] }, para('2024-bad', textNode('bad')),
      para('20240101120000-ddddddd', textNode('first')), para('20240101120000-ddddddd', textNode('again'))));
    expect(doc.children.map((b) => [b.id, b.content])).toEqual([[undefined, 'no id'], [undefined, 'bad'], ['20240101120000-ddddddd', 'first'], [undefined, 'again']]);
    expect(doc.problems).toEqual([expect.stringMatching(/no valid id \(null\)/), expect.stringMatching(/no valid id \("2024-bad"\)/), expect.stringMatching(/20240101120000-ddddddd appears more than once/)]);
  });

  it('keeps a code block\'s whole info string, the language first, as a Markdown fence\'s is kept', () => {
    const info = Buffer.from('js  title="a.js"').toString('base64');
    const block = { ID: '20240101120000-ccccccc', Type: 'NodeCodeBlock', Properties: { id: '20240101120000-ccccccc' }, Children: [
      { Type: 'NodeCodeBlockFenceOpenMarker', Data: '```' }, { Type: 'NodeCodeBlockFenceInfoMarker', CodeBlockInfo: info },
      { Type: 'NodeCodeBlockCode', Data: 'let a = 1;\n' }, { Type: 'NodeCodeBlockFenceCloseMarker', Data: '```' }] };
    expect(siyuanToDrafts(docWith(block)).children[0]).toMatchObject({ type: 'code', subtype: 'js title="a.js"', content: 'let a = 1;' });
  });

  it('maps an unknown callout type to a note keeping the original, and a JavaScript embed to code', () => {
    const doc = siyuanToDrafts(docWith(
      { ID: '20240101120000-eeeeeee', Type: 'NodeCallout', CalloutType: 'QUESTION', CalloutTitle: 'Why?', Properties: { id: '20240101120000-eeeeeee' }, Children: [para('20240101120000-fffffff', textNode('because'))] },
      { ID: '20240101120000-ggggggg', Type: 'NodeBlockQueryEmbed', Children: [{ Type: 'NodeOpenBrace' }, { Type: 'NodeBlockQueryEmbedScript', Data: '//!js_esc_newline_return [];' }, { Type: 'NodeCloseBrace' }] },
    ));
    expect(doc.children[0]).toMatchObject({ type: 'callout', subtype: 'note', attrs: { 'custom-callout': 'QUESTION', 'custom-callout-title': 'Why?' } });
    expect(doc.children[1]).toMatchObject({ type: 'code', subtype: 'js', content: '//!js\nreturn [];' });
    expect(doc.problems).toHaveLength(2);
  });

  it('reads older files: nested strong, code span, tag and block ref nodes, with dynamic anchors', () => {
    const doc = siyuanToDrafts(docWith(para('20240101120000-hhhhhhh',
      { Type: 'NodeStrong', Children: [{ Type: 'NodeStrongA6kOpenMarker', Data: '**' }, textNode('bold'), { Type: 'NodeStrongA6kCloseMarker', Data: '**' }] },
      textNode(' '),
      { Type: 'NodeCodeSpan', Children: [{ Type: 'NodeCodeSpanOpenMarker', Data: '`' }, { Type: 'NodeCodeSpanContent', Data: 'a`b' }, { Type: 'NodeCodeSpanCloseMarker', Data: '`' }] },
      textNode(' '),
      { Type: 'NodeTag', Children: [{ Type: 'NodeTagOpenMarker', Data: '#' }, textNode('old/tag'), { Type: 'NodeTagCloseMarker', Data: '#' }] },
      textNode(' '),
      { Type: 'NodeBlockRef', Children: [{ Type: 'NodeOpenParen' }, { Type: 'NodeOpenParen' }, { Type: 'NodeBlockRefID', Data: '20200812220555-lj3enxa' }, { Type: 'NodeBlockRefSpace' }, { Type: 'NodeBlockRefDynamicText', Data: 'it\'s "here"' }, { Type: 'NodeCloseParen' }, { Type: 'NodeCloseParen' }] },
      textNode(' '),
      { Type: 'NodeTextMark', TextMarkType: 'block-ref', TextMarkBlockRefID: '20200812220555-lj3enxa', TextMarkBlockRefSubtype: 'd', TextMarkTextContent: 'dynamic' },
    )));
    expect(doc.children[0]!.content).toBe('**bold** ``a`b`` #old/tag# ((20200812220555-lj3enxa)) ((20200812220555-lj3enxa \'dynamic\'))');
    expect(doc.problems).toEqual([expect.stringMatching(/holds both kinds of quote/)]);
    expect(doc.refs).toEqual(['20200812220555-lj3enxa']);
  });

  it('escapes text so that it reads back as itself, to Quire and to a CommonMark parser', () => {
    const samples = [
      'a*b* _c_ snake_case `x` $5 and $6 [l](u) ![i](j) <div> <https://x.y> &amp; a < b',
      '#tag# C# and F# ((20200812220555-lj3enxa)) {{ embed }} \\ \\* ~~s~~ ~1~ 50% | x',
      '# not a heading',
      '> not a quote\n- not a list\n1. not ordered\n===',
      '+ plus\n```not code```',
    ];
    const md = unified().use(remarkParse).use(remarkGfm).use(remarkMath);
    const doc = siyuanToDrafts(docWith(...samples.map((sample, i) => para(`20240101120000-000000${i}`, textNode(sample)))));
    doc.children.forEach((block, i) => {
      const content = block.content!;
      expect(block.type).toBe('paragraph');
      expect(inlineToPlain(content)).toBe(samples[i]);
      expect(parseRefs(content)).toEqual([]);
      expect(parseTags(content)).toEqual([]);
      const tree = md.parse(content);
      expect(tree.children.map((node) => node.type)).toEqual(['paragraph']);
      expect(toString(tree)).toBe(samples[i]);
      // What Quire writes and reads back is the same content.
      expect(markdownToBlocks(blocksToMarkdown([block]), () => 'x')[0]!.content).toBe(content);
    });
  });

  it('protects line starts as Quire writes paragraphs: a later line of raw HTML is no block of HTML', () => {
    const html = [textNode('before'), { Type: 'NodeBr' }, { Type: 'NodeInlineHTML', Data: '<div>' }, textNode('after')];
    const doc = siyuanToDrafts(docWith(para('20240101120000-fffffff', ...html)));
    const held = doc.children[0]!;
    // Left as it was, the line read back as a block of HTML (the paragraph split in two).
    expect(held.content).toBe('before\n    <div>after');
    // Read back it is one paragraph (whose later line's indent the parse strips).
    expect(markdownToBlocks(blocksToMarkdown([held]), () => 'x').map((read) => [read.type, read.content])).toEqual([['paragraph', 'before\n<div>after']]);
    expect(markdownToBlocks(held.content!, () => 'x').map((read) => read.type)).toEqual(['paragraph']);
  });

  it('writes emphasis around punctuation, and next to other emphasis, so that it still is emphasis', () => {
    const mark = (type: string, content: string) => ({ Type: 'NodeTextMark', TextMarkType: type, TextMarkTextContent: content });
    const doc = siyuanToDrafts(docWith(para('20240101120000-iiiiiii',
      textNode('x'), mark('strong', '"quoted"'), mark('strong', 'a'), mark('em', 'b'), mark('strong em', ' both '), mark('s', 'gone'), mark('code strong', 'c'))));
    expect(doc.children[0]!.content).toBe('x<strong>"quoted"</strong>**a**<em>b</em> <strong>*both*</strong> ~~gone~~<strong>`c`</strong>');
  });

  it('writes awkward links, images, code and unknown text so that they stay what they were', () => {
    const mark = (type: string, content: string, extra: Record<string, string> = {}) => ({ Type: 'NodeTextMark', TextMarkType: type, TextMarkTextContent: content, ...extra });
    const image = { Type: 'NodeImage', Data: 'span', Children: [{ Type: 'NodeBang' }, { Type: 'NodeOpenBracket' }, { Type: 'NodeLinkText', Data: 'a [b] *c*' },
      { Type: 'NodeCloseBracket' }, { Type: 'NodeOpenParen' }, { Type: 'NodeLinkDest', Data: 'assets/my pic (1).png' }, { Type: 'NodeCloseParen' }] };
    const doc = siyuanToDrafts(docWith(
      para('20240101120000-mmmmmmm', mark('a', 'docs [v2]', { TextMarkAHref: 'https://x.y/a b?q=1&amp;r=(2)', TextMarkATitle: 'say "hi"' }), textNode(' '), image, textNode(' '), mark('code', 'a``b &lt;c&gt;')),
      { ID: '20240101120000-nnnnnnn', Type: 'NodeGizmo', Children: [textNode('2 * 3 = `six`')] },
    ));
    expect(doc.children[0]!.content).toBe('[docs \\[v2\\]](https://x.y/a%20b?q=1&r=\\(2\\) "say \\"hi\\"") ![a \\[b\\] \\*c\\*](assets/my%20pic%20\\(1\\).png) <code>a\\`\\`b \\<c></code>');
    expect(inlineToPlain(doc.children[0]!.content!)).toBe('docs [v2] a [b] *c* a``b <c>');
    expect(doc.assets).toEqual(['assets/my pic (1).png']);
    expect(doc.children[1]!.content).toBe('2 \\* 3 = \\`six\\`');
  });

  it('survives deep nesting without overflowing the stack', () => {
    let quote: Record<string, unknown> = para('20240101120000-jjjjjjj', textNode('deep'));
    for (let i = 0; i < 5000; i++) quote = { Type: 'NodeBlockquote', ID: `20240101${String(100000 + i).padStart(6, '0')}-kkkkkkk`, Children: [{ Type: 'NodeBlockquoteMarker', Data: '>' }, quote] };
    let strong: Record<string, unknown> = textNode('inner');
    for (let i = 0; i < 5000; i++) strong = { Type: 'NodeStrong', Children: [strong] };
    const doc = siyuanToDrafts(docWith(quote, para('20240101120000-lllllll', strong)));
    expect(doc.problems).toEqual([expect.stringMatching(/nested deeper than 64 levels/)]);
    expect(flatten(doc.children).some((b) => b.content === 'deep')).toBe(true);
    expect(inlineToPlain(doc.children[1]!.content!)).toBe('inner');
  });

  it('reads SiYuan timestamps in the local zone as ISO stamps, and refuses impossible ones', () => {
    expect(siyuanStamp('20200812220555')).toBe('2020-08-12T22:05:55.000Z');
    // SiYuan writes the local time of its machine: read in this machine's zone (the suite runs in UTC).
    const zone = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Shanghai';
      expect(siyuanStamp('20200812220555')).toBe('2020-08-12T14:05:55.000Z');
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    expect(siyuanStamp('20201332220555')).toBeUndefined();
    expect(siyuanStamp('2020081222055')).toBeUndefined();
  });
});

describe('siyuanToDrafts on what is not a SiYuan document', () => {
  it.each([
    [null, /expected a JSON object, got null/],
    [[], /expected a JSON object, got an array/],
    ['{"ID": ', /the text is not valid JSON/],
    [{ ID: '20240101120000-aaaaaaa', Type: 'NodeParagraph' }, /its "Type" is "NodeParagraph", expected "NodeDocument"/],
    [{ Children: [] }, /its "Type" is missing, expected "NodeDocument"/],
    [{ Type: 'NodeDocument', ID: '../../etc' }, /its "ID" "\.\.\/\.\.\/etc" is not a block id/],
    [{ Type: 'NodeDocument' }, /its "ID" is missing/],
    [{ Type: 'NodeDocument', ID: '20240101120000-aaaaaaa', Children: {} }, /"Children" is not an array/],
  ])('throws a clear error for %j', (input, message) => {
    expect(() => siyuanToDrafts(input)).toThrow(message);
    expect(() => siyuanToDrafts(input)).toThrow(/^Not a SiYuan document: /);
  });

  it('accepts the file text as well as its parsed JSON', () => {
    const text = readFileSync(join(FIXTURES, SHORTCUTS), 'utf8');
    expect(siyuanToDrafts(text)).toEqual(siyuanToDrafts(JSON.parse(text)));
  });
});
