import type { ActionCall, ActionHandler } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertNotebookVisible, invalid } from './access.js';
import { createDocumentNow } from './document-actions.js';
import { changeDocument } from './mutate.js';
import { materialise } from './tree-ops.js';
import { SETTABLE_ATTR } from './document-file.js';

interface DailyInput { notebook: string; date?: string; markdown?: string }

/** `YYYY-MM-DD` in the kernel's local time: a person's "today" is local, not UTC. */
function today(now: Date = new Date()): string {
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
}

function checkDate(date: string): string {
  const parsed = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date) throw invalid(`'${date}' is not a calendar date (YYYY-MM-DD)`, { field: 'date' });
  return date;
}

/** The attribute that marks a daily note, so that renaming its title does not lose it. */
function marker(date: string): string {
  return `custom-dailynote-${date.replace(/-/g, '')}`;
}

/** The dailynote tool: one document per day and notebook, titled by its date. */
export function dailynoteActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  const find = (notebook: string, date: string): string | undefined =>
    store.index.reader.prepare(`SELECT a.block_id FROM attributes a JOIN documents d ON d.id = a.block_id WHERE a.name = ? AND d.notebook = ? ORDER BY a.block_id LIMIT 1`)
      .pluck().get(marker(date), notebook) as string | undefined;
  const add = async (input: DailyInput, call: ActionCall, where: 'first' | 'last') => {
    const date = checkDate(input.date ?? today());
    assertNotebookVisible(store, call, input.notebook);
    const markdown = input.markdown ?? '';
    const drafts = await rt.parseMarkdown(markdown, call);
    if (drafts.length === 0) throw invalid('The Markdown holds no block', { field: 'markdown' });
    // Looked up and created in one step of the write queue: two first appends must not make two notes.
    return store.queue.run(async () => {
      const existing = find(input.notebook, date);
      if (!existing) {
        const created = await createDocumentNow(rt, call, { notebook: input.notebook, title: date, drafts, attrs: { [marker(date)]: date } });
        // The new blocks' ids, as an append to an existing note answers them: the caller may refer to them next.
        const ids = ((await store.read(created.id)).children ?? []).map((block) => block.id);
        return { id: created.id, date, created: true, ids };
      }
      return changeDocument(store, existing, call, ({ root, by, now }) => {
        const blocks = materialise(drafts, by, now);
        const children = root.children!;
        // A new daily note starts with one empty paragraph; the first real content replaces it.
        // Unless someone gave it attributes of its own (a bookmark, a name): then it is a block someone keeps.
        if (children.length === 1 && children[0]!.type === 'paragraph' && children[0]!.content === '' && !Object.keys(children[0]!.attrs).some((name) => SETTABLE_ATTR.test(name))) children.splice(0, 1);
        if (where === 'first') children.unshift(...blocks);
        else children.push(...blocks);
        return { id: existing, date, created: false, ids: blocks.map((block) => block.id) };
      });
    }, call);
  };
  return {
    get: (input, call) => {
      const { notebook, date: given } = input as unknown as DailyInput;
      const date = checkDate(given ?? today());
      assertNotebookVisible(store, call, notebook);
      const id = find(notebook, date);
      return { date, notebook, id: id ?? null, hpath: id ? store.catalog.hpath(id) : null };
    },
    append: (input, call) => add(input as unknown as DailyInput, call, 'last'),
    prepend: (input, call) => add(input as unknown as DailyInput, call, 'first'),
  };
}
