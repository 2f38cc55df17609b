import type { WebKernel } from './web-harness.js';

export interface Created { id: string }

/** Hostile text a note may hold: none of it may run in the app. */
export const HOSTILE = [
  '<script>window.__pwned = "script"</script>',
  '',
  'An image <img src=x onerror="window.__pwned = \'onerror\'"> inline, and [a link](javascript:window.__pwned=\'link\') and ![pic](javascript:alert(1)).',
  '',
  '<svg onload="window.__pwned = \'svg\'"><script>window.__pwned = "svg-script"</script></svg>',
  '',
  '<iframe src="javascript:parent.__pwned=\'iframe\'"></iframe>',
].join('\n');

/** Two notebooks (Work published, Diary private) with a rich document, a hostile one and a secret one. */
export async function notes(web: WebKernel): Promise<{ work: string; diary: string; plans: string; paragraph: string }> {
  const work = await web.act<Created>('notebook_create', { name: 'Work' });
  await web.act('notebook_set_access', { id: work.id, access: 'published' });
  const diary = await web.act<Created>('notebook_create', { name: 'Diary' });
  const plans = await web.act<Created>('document_create', {
    notebook: work.id, title: 'Plans',
    markdown: '# Goals\n\nShip the **web app** with `code` and a #launch# tag.\n\n- [ ] write tests\n- [x] pick a library\n\n```ts\nconst x = 1;\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n> [!TIP]\n> Small steps.\n\n$$\nE = mc^2\n$$\n',
  });
  await web.act('document_create', { notebook: work.id, title: 'Hostile', markdown: HOSTILE });
  await web.act('document_create', { notebook: diary.id, title: 'Secret', markdown: 'The zanzibarite plan is private.' });
  const doc = await web.act<{ document: { children: { id: string; type: string }[] } }>('document_get', { id: plans.id });
  const paragraph = doc.document.children.find((block) => block.type === 'paragraph')!.id;
  return { work: work.id, diary: diary.id, plans: plans.id, paragraph };
}
