import type { Effect } from '../plugin-api.js';

/**
 * What embedding and reranking backends offer (DESIGN.md §6). A plugin provides them under the names its
 * manifest lists in `embedders` / `rerankers`; the kernel wraps every call so that it runs with the
 * effects that manifest entry declares (a backend that did not declare `dataEgress` cannot reach the
 * network), and the actions that use the selected backend carry its effects to the gate.
 */

/** Turns texts into vectors. Vectors of another model or size are never compared. */
export interface Embedder {
  /** The backend's name in its plugin's manifest (`openai`, `gemini`, `onnx`). */
  readonly id: string;
  /** The model id (as the server reported it, or as configured), stored with every vector. */
  readonly model: string;
  /**
   * The model id as configured, where the server may answer under another (`model` then changes with its
   * answers): the name answered is kept per configured name, for the next start. Absent: `model`.
   */
  readonly configuredModel?: string;
  /** The vectors' length: configured, or learnt from the first answer (0 until then). */
  readonly dimensions: number;
  /** One vector per text, in order; rejects (nothing half-done) when any text could not be embedded. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * A query may be embedded differently from a document (instruction-prefixed models, Gemini's task
   * types); backends without the distinction leave it out and `embed` is used.
   */
  embedQuery?(text: string, signal?: AbortSignal): Promise<Float32Array>;
  /** Releases what the backend holds (a loaded model); called when the kernel stops. */
  dispose?(): Promise<void>;
}

/** Scores documents against a query: one score per document, in the documents' order, higher is better. */
export interface Reranker {
  readonly id: string;
  readonly model: string;
  rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[]>;
  dispose?(): Promise<void>;
}

export type BackendKind = 'embedder' | 'reranker';

export interface BackendOf {
  embedder: Embedder;
  reranker: Reranker;
}

/** A backend as the kernel holds it: who offers it, what one call does, and the call-scoped wrapper. */
export interface SelectedBackend<K extends BackendKind> {
  plugin: string;
  name: string;
  /** What the gate acts on: the manifest entry's effects (every effect for an untrusted plugin that declares none). */
  effects: readonly Effect[];
  /** Every call runs in an egress scope with the manifest entry's declared effects. */
  backend: BackendOf[K];
}

/** Who is calling, as far as the choice of backend goes. */
export interface BackendCaller {
  /** Its session and turn, for an agent's call (its usage is recorded under them). */
  readonly principal: { readonly role: 'admin' | 'reader'; readonly sessionId?: string; readonly turnId?: string };
}

/** The backend quire.json selects for a kind, looked up when it is used (activation order does not matter). */
export interface BackendHandle<K extends BackendKind> {
  readonly kind: K;
  /** `<plugin id>` or `<plugin id>/<name>`, as configured. */
  readonly ref: string;
  /**
   * The backend, or undefined when the reference names no active backend, or when `caller` is a reader
   * and the backend has effects: a reader's call may not send data away or spend money, so it goes
   * without (hybrid search answers from full text alone).
   */
  current(caller?: BackendCaller): SelectedBackend<K> | undefined;
  /** Why `current(caller)` is undefined. */
  unavailable(caller?: BackendCaller): string | undefined;
}
