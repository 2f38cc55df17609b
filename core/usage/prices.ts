/** USD per million tokens of each kind, for one model (`usage.prices.<model>` in quire.json). */
export interface ModelPrice {
  input: number;
  /** Cached input; default the input price. */
  cachedInput?: number;
  output: number;
  /** Reasoning (part of the output); default the output price. */
  reasoning?: number;
}

/** Token counts of one request or a sum of them. Cached input is part of input, reasoning part of output. */
export interface TokenCounts {
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
}

export const NO_TOKENS: TokenCounts = Object.freeze({ input: 0, cachedInput: 0, output: 0, reasoning: 0 });

/** The cost in USD, or null when the price is unknown (never zero for an unknown price). */
export function costOf(tokens: TokenCounts, price: ModelPrice | undefined): number | null {
  if (!price) return tokens.input + tokens.output === 0 ? 0 : null;
  const cached = Math.min(tokens.cachedInput, tokens.input);
  const reasoning = Math.min(tokens.reasoning, tokens.output);
  const dollars = (tokens.input - cached) * price.input + cached * (price.cachedInput ?? price.input)
    + (tokens.output - reasoning) * price.output + reasoning * (price.reasoning ?? price.output);
  return dollars / 1_000_000;
}

export function totalTokens(tokens: TokenCounts): number {
  return tokens.input + tokens.output;
}

/**
 * A request's cost at worst: its prompt at the input price, and its whole answer at the dearer of the
 * output and reasoning prices (reasoning is part of the output; priced higher, an answer of reasoning
 * only cost more than the worst case said, and a budget could be passed).
 */
export function worstCaseCost(input: number, output: number, price: ModelPrice | undefined): number | null {
  const reasoningDearer = price !== undefined && (price.reasoning ?? price.output) > price.output;
  return costOf({ input, cachedInput: 0, output, reasoning: reasoningDearer ? output : 0 }, price);
}
