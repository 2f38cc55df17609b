import type { ActionHandler } from '../../core/index.js';
import type { BlocksIndex } from './tokens.js';

/**
 * The handlers of a plugin that returns notes (search, history, snapshots...), each telling its call
 * which notebooks' notes its result holds (ActionCall.returned), from the ids in the result.
 */
export function reportingNotes(blocks: BlocksIndex, handlers: Record<string, ActionHandler>): Record<string, ActionHandler> {
  const out: Record<string, ActionHandler> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    out[name] = async (input, call) => {
      const result = await handler(input, call);
      blocks.reportReturned(call, result);
      return result;
    };
  }
  return out;
}
