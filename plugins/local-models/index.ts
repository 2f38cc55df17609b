import { join } from 'node:path';
import { definePlugin, WORKSPACE, type Logger } from '../../core/index.js';
import type { LocalModelsConfig, ModelDtype } from './config.js';
import { checkModelFolder } from './model-folder.js';
import { OnnxEmbedder } from './onnx-embedder.js';
import { OnnxReranker } from './onnx-reranker.js';

function warnIfMissing(log: Logger, modelsDir: string, model: string, dtype: ModelDtype | undefined): void {
  try {
    checkModelFolder(modelsDir, model, dtype);
  } catch (error) {
    log.warn('model not found', { model, reason: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * Offers the `onnx` embedder and reranker for the parts quire.json configures. Nothing is loaded here
 * (not even @huggingface/transformers): a model is loaded on its first call, on a worker thread.
 */
export default definePlugin<LocalModelsConfig>({
  activate(ctx) {
    const modelsDir = join(ctx.get(WORKSPACE).root, 'models');
    const { embedder, reranker } = ctx.config;
    for (const part of [embedder, reranker]) {
      // Said once at start; the backend is offered anyway, so a model pulled later works without a restart.
      if (part) warnIfMissing(ctx.log, modelsDir, part.model, part.dtype);
    }
    if (embedder) ctx.provideBackend('embedder', 'onnx', new OnnxEmbedder(embedder, modelsDir));
    if (reranker) ctx.provideBackend('reranker', 'onnx', new OnnxReranker(reranker, modelsDir));
    return {};
  },
});
