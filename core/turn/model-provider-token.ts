import { createToken } from '../tokens.js';
import type { ModelProvider } from './model-provider.js';

/** The model the agent talks to; provided by the providers plugin (native only, like every `agent.*`). */
export const MODEL_PROVIDER = createToken<ModelProvider>('agent.model');
