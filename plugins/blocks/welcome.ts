import { newId, type ActionCall } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { createDocument } from './document-actions.js';

const WELCOME = `Quire keeps your notes as files in this workspace and mirrors them into a local index for search.

## What is here

- Notebooks are folders under \`data/\`; each document is one JSON file you can read, diff and back up.
- Every block has an id, so other blocks can refer to it: this page is tagged #welcome#.
- [ ] Create a notebook of your own
- [ ] Ask the agent to summarise a document

## The agent

The agent reads and writes these notes through the same tools you can call over HTTP. Before it changes
anything it asks you, and before its first change in a turn the workspace is snapshotted.

> [!TIP]
> Every change records who made it in the block's \`updatedBy\` attribute.
`;

const TOUR = `# Headings, lists and tasks

1. Ordered lists
2. With nested items
   - like this one

| Syntax | Result |
| ------ | ------ |
| \`**bold**\` | **bold** |

$$
e^{i\\pi} + 1 = 0
$$

\`\`\`ts
const answer = 42;
\`\`\`
`;

/** A first notebook for a new workspace, so that the first `quire serve` has something to read and search. */
export async function createWelcomeNotebook(rt: BlocksRuntime): Promise<void> {
  const { store } = rt;
  if (store.catalog.notebooks.size > 0) return;
  const call: ActionCall = { callId: 'welcome', principal: { kind: 'kernel', name: 'kernel', role: 'admin' }, signal: new AbortController().signal, stopped: undefined, progress: () => undefined, log: rt.log, deniedNotebooks: new Set(), readOnlyNotebooks: new Set(), returned: () => undefined };
  const notebook = await store.queue.run(async () => {
    const id = newId();
    await store.writeNotebookConf(id, { name: 'Welcome', icon: '', sort: 0, access: 'private' });
    return id;
  });
  const welcome = await createDocument(rt, call, { notebook, title: 'Welcome to Quire', drafts: rt.markdownToBlocks(WELCOME) });
  await createDocument(rt, call, { notebook, title: 'A Markdown tour', parentId: welcome.id, drafts: rt.markdownToBlocks(TOUR) });
}
