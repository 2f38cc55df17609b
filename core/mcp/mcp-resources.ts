import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { KernelError, isKernelError } from '../errors.js';
import { NOTEBOOK_SCOPE, type NotebookScope } from '../gate/notebook-scope.js';
import { isValidId } from '../ids.js';
import type { Kernel } from '../kernel.js';
import type { Principal } from '../plugin-api.js';
import { heldBackFromMcp, MCP_WITHHELD } from './mcp-egress.js';
import { answeringJsonRpcErrors, RESOURCE_NOT_FOUND } from './mcp-errors.js';

const PAGE = 100;
/** Documents walked for one listing at most (a page is cut from them): every request stays bounded. */
const MAX_LISTED = 20_000;
/** How long a listing's walk is kept for its next pages. */
const LISTING_KEPT_MS = 60_000;
/** Resources one MCP session may watch. */
export const MAX_SUBSCRIPTIONS = 1_000;
const URI = /^quire:\/\/(blocks|documents|notebooks)\/(\d{14}-[0-9a-z]{7})$/;

interface Listed { id: string; name?: string; title?: string; childDocuments?: number; documents?: number }

/**
 * Notes as MCP resources (issue 18, point 4): `quire://notebooks/<id>`, `quire://documents/<id>` and
 * `quire://blocks/<id>` (the links SQL and search results carry), read as Markdown. Every read and
 * listing is an action call through the pipeline as the MCP caller, so the reader and agent scopes
 * are the tools' own. A subscribed document or block is announced (`notifications/resources/updated`)
 * when the notes index reports a change to it.
 */
export function serveResources(server: Server, kernel: Kernel, caller: () => Principal): () => void {
  // A bad URI or cursor is invalid params, a missing note "resource not found": not an internal error.
  const handlers = answeringJsonRpcErrors(server, RESOURCE_NOT_FOUND);
  // Each request's calls carry its signal: a client's cancel (its own timeout) stopped a walk of thousands
  // of listings only at its end.
  const callWith = (signal?: AbortSignal) => async <T,>(target: string, input: Record<string, unknown>): Promise<T> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: caller(), ...(signal ? { signal } : {}) });
    if (outcome.status !== 'ok') throw new KernelError('INTERNAL', `${target} did not answer (${outcome.status})`);
    if (heldBackFromMcp(kernel, outcome.call)) throw new KernelError('EGRESS_DENIED', MCP_WITHHELD, { details: { reason: 'local-only' } });
    return outcome.value as T;
  };
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: 'quire://documents/{id}', name: 'document', title: 'A document, as Markdown', mimeType: 'text/markdown' },
      { uriTemplate: 'quire://blocks/{id}', name: 'block', title: 'A block and its children, as Markdown', mimeType: 'text/markdown' },
      { uriTemplate: 'quire://notebooks/{id}', name: 'notebook', title: 'A notebook: its documents, as a Markdown list of links', mimeType: 'text/markdown' },
    ],
  }));
  const call = callWith();
  const scope = kernel.container.isRegistered(NOTEBOOK_SCOPE, true) ? kernel.container.resolve<NotebookScope>(NOTEBOOK_SCOPE) : undefined;
  // The session's last listing, walked once for all its pages (each page walked the whole tree again: a
  // client paging through 20,000 documents made 200 walks). Pages then show the notes as they were when
  // the listing began; a cursor of another listing, or one kept past its time, walks again.
  let kept: { id: string; listed: ListingFound; at: number; privacy: string; unwatch: (() => void) | undefined } | undefined;
  // A notebook marked local-only or closed to the agent (agent: none) since the walk: its titles must not
  // go out from the kept pages.
  const privacyNow = (): string => (scope?.privacy() ?? []).map((notebook) => `${notebook.id}:${notebook.agent}:${notebook.egress}`).sort().join(',');
  const dropKept = (): void => {
    kept?.unwatch?.();
    kept = undefined;
  };
  const withheld = (): Set<string> => new Set((scope?.privacy() ?? []).filter((notebook) => notebook.agent === 'none' || notebook.egress === 'local-only').map((notebook) => notebook.id));
  // A document of the listing moved into such a notebook since the walk began, or the index rebuilt:
  // its title would go out from the walk's pages (for up to a minute). A write inside such a notebook
  // (none of its documents is listed) or a removal moves nothing in: the pages stay.
  const MAX_NOTED = 10_000;
  let closed = false;
  const idsOf = (listed: ListingFound): Set<string> => new Set(listed.resources.map((resource) => resource.uri.slice(resource.uri.lastIndexOf('/') + 1)));
  /**
   * Walks the notes, noting meanwhile the ids written in withheld notebooks: a walk that listed one of
   * them is walked again (three times at most, then the client is asked to list again). The walk kept
   * listens on, each its own listener (two listings at once undid each other's), and goes at such a change.
   */
  const walk = async (signal: AbortSignal | undefined): Promise<NonNullable<typeof kept>> => {
    for (let attempt = 1; ; attempt++) {
      let rebuilt = false;
      const noted = new Set<string>();
      let entry: NonNullable<typeof kept> | undefined;
      let listedIds: Set<string> | undefined;
      const unwatch = scope?.onChanged?.((change) => {
        if (change.rebuilt === true) rebuilt = true;
        else {
          const hidden = withheld();
          if (![...change.notebooks].some((notebook) => hidden.has(notebook))) return;
          for (const id of change.ids) if (noted.size <= MAX_NOTED) noted.add(id);
        }
        // The walk kept: dropped at once when the change names one of its documents.
        if (entry !== undefined && kept === entry && (rebuilt || [...change.ids].some((id) => listedIds!.has(id)))) dropKept();
      });
      const privacy = privacyNow();
      let listed: ListingFound;
      try {
        listed = await listAll(callWith(signal));
      } catch (error) {
        unwatch?.();
        throw error;
      }
      listedIds = idsOf(listed);
      const crossed = rebuilt || noted.size > MAX_NOTED || [...noted].some((id) => listedIds!.has(id));
      if (!crossed && privacy === privacyNow() && !closed) {
        // Kept here, in the same step: a change between the walk's end and its keeping is not missed.
        dropKept();
        entry = { id: randomUUID().slice(0, 8), listed, at: Date.now(), privacy, unwatch };
        kept = entry;
        return entry;
      }
      unwatch?.();
      if (closed) throw new KernelError('ACTION_CANCELLED', 'the MCP session closed while its notes were listed');
      if (attempt === 3) throw new KernelError('NOT_READY', 'the notes kept moving between notebooks while they were listed; list them again', { details: { retryable: true } });
    }
  };
  handlers.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const { listing, offset } = parseCursor(request.params?.cursor);
    // The listing this page comes from: kept, or walked now (another listing may be kept meanwhile).
    const serving = kept && kept.id === listing && Date.now() - kept.at <= LISTING_KEPT_MS && kept.privacy === privacyNow() ? kept : await walk(extra.signal);
    const { resources, truncated } = serving.listed;
    const page = resources.slice(offset, offset + PAGE);
    const more = offset + PAGE < resources.length;
    // A listing cut at its bound says so on its last page (MCP has no field for it): the rest is reached
    // through the notebooks' own resources (quire://notebooks/<id>) and search.
    return {
      resources: page, ...(more ? { nextCursor: `${serving.id}.${offset + PAGE}` } : {}),
      ...(!more && truncated ? { _meta: { 'quire/truncated': true, 'quire/limit': MAX_LISTED } } : {}),
    };
  });
  handlers.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { kind, id } = parseUri(request.params.uri);
    const call = callWith(extra.signal);
    const text = kind === 'documents'
      ? (await call<{ markdown: string }>('document_get_markdown', { id })).markdown
      : kind === 'blocks'
        ? (await call<{ markdown?: string; block?: { markdown?: string } }>('block_get', { id })).markdown ?? ''
        : notebookMarkdown(await call<{ documents: Listed[] }>('document_list', { notebook: id }));
    return { contents: [{ uri: request.params.uri, mimeType: 'text/markdown', text }] };
  });
  const subscribed = new Set<string>();
  // Listened to from the first subscription only: a session that never subscribes costs the index nothing.
  let unsubscribe: (() => void) | undefined;
  /** Only what the caller may read can be watched: the read answers NOT_FOUND otherwise. */
  const checkReadable = async (kind: 'blocks' | 'documents' | 'notebooks', id: string): Promise<void> => {
    if (kind === 'documents') await call('document_info', { id });
    else if (kind === 'blocks') await call('block_get', { id });
    else await call('document_list', { notebook: id });
  };
  /**
   * One change of a watched resource told, once it is read again. Gone or closed to the client (NOT_FOUND
   * either way, as for a read): told one last time, then no more. Any other failure (the index busy): told.
   */
  const tellIfReadable = async (uri: string, kind: 'blocks' | 'documents' | 'notebooks', id: string): Promise<void> => {
    const readable = await checkReadable(kind, id).then(() => true, (error: unknown) => !(isKernelError(error) && error.code === 'NOT_FOUND'));
    if (!readable) subscribed.delete(uri);
    await server.sendResourceUpdated({ uri }).catch(() => undefined);
  };
  const watch = (): void => {
    unsubscribe ??= scope?.onChanged?.((change) => {
      for (const uri of subscribed) {
        const { kind, id } = parseUri(uri);
        const touched = change.all || (kind === 'notebooks' ? change.notebooks.has(id) : change.ids.has(id));
        // Read again before telling: a notebook closed to the client since (agent: none, or moved there)
        // would otherwise keep telling it that the document exists and when it changes. It stops instead.
        if (touched) void tellIfReadable(uri, kind, id);
      }
    });
  };
  // Subscriptions being checked count too: the SDK runs a batch of requests at once, each past the check
  // before the first was added.
  let checking = 0;
  const refuseOverLimit = (uri: string): void => {
    if (!subscribed.has(uri) && subscribed.size + checking >= MAX_SUBSCRIPTIONS) {
      throw new KernelError('INVALID_INPUT', `at most ${MAX_SUBSCRIPTIONS} resources can be watched by one session; unsubscribe from some first`, { details: { limit: MAX_SUBSCRIPTIONS } });
    }
  };
  handlers.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { kind, id } = parseUri(request.params.uri);
    // Bounded: a removal anywhere reads every subscribed resource again, at once.
    refuseOverLimit(request.params.uri);
    checking++;
    try {
      await checkReadable(kind, id);
    } finally {
      checking--;
    }
    refuseOverLimit(request.params.uri);
    subscribed.add(request.params.uri);
    watch();
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  return () => {
    closed = true;
    unsubscribe?.();
    dropKept();
  };
}

function parseUri(uri: string): { kind: 'blocks' | 'documents' | 'notebooks'; id: string } {
  const match = URI.exec(uri);
  if (!match || !isValidId(match[2])) throw new KernelError('INVALID_INPUT', `not a Quire resource: ${uri.slice(0, 200)} (quire://documents/<id>, quire://blocks/<id> or quire://notebooks/<id>)`, { details: { uri: uri.slice(0, 200) } });
  return { kind: match[1] as 'blocks' | 'documents' | 'notebooks', id: match[2]! };
}

/** A cursor is `<listing>.<offset>` (a bare offset, from before listings were kept, walks again). */
function parseCursor(cursor: string | undefined): { listing?: string; offset: number } {
  if (cursor === undefined) return { offset: 0 };
  const match = /^(?:([0-9a-f]{8})\.)?(\d{1,9})$/.exec(cursor);
  if (!match) throw new KernelError('INVALID_INPUT', `invalid cursor ${JSON.stringify(cursor.slice(0, 50))}`, { details: { field: 'cursor' } });
  return { ...(match[1] ? { listing: match[1] } : {}), offset: Number(match[2]) };
}

/** What one listing found: the resources, and whether the walk stopped at its bound. */
interface ListingFound { resources: Resource[]; truncated: boolean }

/** Notebooks, then their documents depth first, as the caller may see them (bounded). */
async function listAll(call: <T>(target: string, input: Record<string, unknown>) => Promise<T>): Promise<ListingFound> {
  const out: Resource[] = [];
  let truncated = false;
  const { notebooks } = await call<{ notebooks: Listed[] }>('notebook_list', {});
  for (const notebook of notebooks) {
    if (out.length >= MAX_LISTED) {
      truncated = true;
      break;
    }
    out.push({ uri: `quire://notebooks/${notebook.id}`, name: notebook.name ?? notebook.id, mimeType: 'text/markdown' });
    const stack: { notebook: string; parentId?: string }[] = [{ notebook: notebook.id }];
    while (stack.length > 0) {
      if (out.length >= MAX_LISTED) {
        truncated = true;
        break;
      }
      const at = stack.pop()!;
      // A local-only notebook's titles are held back from MCP clients: the notebook is listed, its documents not.
      const listed = await call<{ documents: Listed[] }>('document_list', { notebook: at.notebook, ...(at.parentId ? { parentId: at.parentId } : {}) })
        .catch((error: unknown) => { if ((error as { code?: string }).code === 'EGRESS_DENIED') return { documents: [] as Listed[] }; throw error; });
      const { documents } = listed;
      for (const doc of documents) {
        out.push({ uri: `quire://documents/${doc.id}`, name: doc.title ?? doc.id, mimeType: 'text/markdown' });
        if ((doc.childDocuments ?? 1) > 0) stack.push({ notebook: notebook.id, parentId: doc.id });
      }
    }
  }
  return { resources: out, truncated };
}

function notebookMarkdown(list: { documents: Listed[] }): string {
  return list.documents.map((doc) => `- [${(doc.title ?? doc.id).replace(/[[\]]/g, '')}](quire://documents/${doc.id})`).join('\n');
}
