/**
 * Model responses as each protocol puts them on the wire (PROTOCOLS.md §3), built from one neutral
 * script so that the same turn can be played by every provider's fake.
 */
export interface ScriptRound {
  reasoning?: string;
  text?: string;
  calls?: { id: string; name: string; args: Record<string, unknown> }[];
  usage?: { input: number; output: number };
  /** Opaque state the provider must send back: encrypted reasoning, a thinking signature, a thought signature. */
  secret?: string;
  /** How the text is cut into deltas (default: two halves). Their concatenation must equal `text`. */
  deltas?: string[];
}

export type WireProtocol = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

export function framesFor(protocol: WireProtocol, round: ScriptRound): string[] {
  switch (protocol) {
    case 'openai-chat': return chatFrames(round);
    case 'openai-responses': return responsesFrames(round);
    case 'anthropic': return anthropicFrames(round);
    case 'gemini': return geminiFrames(round);
  }
}

const usageOf = (round: ScriptRound) => round.usage ?? { input: 10, output: 5 };

function chatFrames(round: ScriptRound): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-fx', object: 'chat.completion.chunk', created: 1760000000, model: 'gpt-fake', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const frames: string[] = [chunk({ role: 'assistant', content: null })];
  if (round.reasoning) frames.push(chunk({ reasoning_content: round.reasoning }));
  if (round.text) for (const piece of textPieces(round)) frames.push(chunk({ content: piece }));
  for (const [index, call] of (round.calls ?? []).entries()) {
    const args = JSON.stringify(call.args);
    const [head, tail] = halves(args);
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    frames.push(chunk({ tool_calls: [{ index, function: { arguments: head } }] }));
    frames.push(chunk({ tool_calls: [{ index, function: { arguments: tail } }] }));
  }
  frames.push(chunk({}, round.calls?.length ? 'tool_calls' : 'stop'));
  const usage = usageOf(round);
  frames.push(`data: ${JSON.stringify({ id: 'chatcmpl-fx', object: 'chat.completion.chunk', created: 1760000000, model: 'gpt-fake', choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, prompt_tokens_details: { cached_tokens: 0 } } })}\n\n`);
  frames.push('data: [DONE]\n\n');
  return frames;
}

function responsesFrames(round: ScriptRound): string[] {
  let sequence = 0;
  const frame = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const base = { id: 'resp_fx', object: 'response', created_at: 1760000000, model: 'gpt-fake', error: null, incomplete_details: null, instructions: null, metadata: {}, parallel_tool_calls: true, temperature: 1, tool_choice: 'auto', tools: [], top_p: 1 };
  const output: Record<string, unknown>[] = [];
  const frames = [frame('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null } })];
  if (round.reasoning !== undefined || round.secret !== undefined) {
    const index = output.length;
    const item = { type: 'reasoning', id: `rs_${index}`, summary: [] as unknown[] };
    frames.push(frame('response.output_item.added', { output_index: index, item }));
    if (round.reasoning) frames.push(frame('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta: round.reasoning }));
    const done = { ...item, summary: round.reasoning ? [{ type: 'summary_text', text: round.reasoning }] : [], encrypted_content: round.secret ?? 'enc' };
    frames.push(frame('response.output_item.done', { output_index: index, item: done }));
    output.push(done);
  }
  if (round.text) {
    const index = output.length;
    const item = { type: 'message', id: `msg_${index}`, role: 'assistant', status: 'in_progress', content: [] };
    frames.push(frame('response.output_item.added', { output_index: index, item }));
    frames.push(frame('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
    for (const piece of textPieces(round)) frames.push(frame('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: piece, logprobs: [] }));
    const done = { ...item, status: 'completed', content: [{ type: 'output_text', text: round.text, annotations: [] }] };
    frames.push(frame('response.output_item.done', { output_index: index, item: done }));
    output.push(done);
  }
  for (const call of round.calls ?? []) {
    const index = output.length;
    const args = JSON.stringify(call.args);
    const item = { type: 'function_call', id: `fc_${index}`, call_id: call.id, name: call.name, arguments: '', status: 'in_progress' };
    frames.push(frame('response.output_item.added', { output_index: index, item }));
    for (const piece of halves(args)) frames.push(frame('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: piece }));
    frames.push(frame('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: call.name, arguments: args }));
    const done = { ...item, arguments: args, status: 'completed' };
    frames.push(frame('response.output_item.done', { output_index: index, item: done }));
    output.push(done);
  }
  const usage = usageOf(round);
  frames.push(frame('response.completed', { response: { ...base, status: 'completed', output, usage: { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output } } }));
  return frames;
}

function anthropicFrames(round: ScriptRound): string[] {
  const frame = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const usage = usageOf(round);
  const frames = [frame('message_start', { message: { id: 'msg_fx', type: 'message', role: 'assistant', model: 'claude-fake', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } })];
  let index = 0;
  if (round.reasoning !== undefined || round.secret !== undefined) {
    frames.push(frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    frames.push(frame('ping', {}));
    if (round.reasoning) frames.push(frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: round.reasoning } }));
    frames.push(frame('content_block_delta', { index, delta: { type: 'signature_delta', signature: round.secret ?? 'sig' } }));
    frames.push(frame('content_block_stop', { index }));
    index++;
  }
  if (round.text) {
    frames.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const piece of textPieces(round)) frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
    frames.push(frame('content_block_stop', { index }));
    index++;
  }
  for (const call of round.calls ?? []) {
    frames.push(frame('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }));
    for (const piece of halves(JSON.stringify(call.args))) frames.push(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
    frames.push(frame('content_block_stop', { index }));
    index++;
  }
  frames.push(frame('message_delta', { delta: { stop_reason: round.calls?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output } }));
  frames.push(frame('message_stop', {}));
  return frames;
}

function geminiFrames(round: ScriptRound): string[] {
  const usage = usageOf(round);
  const chunk = (parts: Record<string, unknown>[], last: boolean) => `data: ${JSON.stringify({
    candidates: [{ index: 0, ...(last ? { finishReason: 'STOP' } : {}), content: { role: 'model', parts } }],
    usageMetadata: last ? { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output } : { promptTokenCount: usage.input, totalTokenCount: usage.input },
    modelVersion: 'gemini-fake', responseId: 'gem_fx',
  })}\r\n\r\n`;
  const frames: string[] = [];
  if (round.reasoning) frames.push(chunk([{ text: round.reasoning, thought: true }], false));
  const parts: Record<string, unknown>[] = [];
  // Streamed text comes one chunk per piece; the last piece travels with the finish reason.
  const pieces = round.deltas ?? (round.text ? [round.text] : []);
  for (const piece of pieces.slice(0, -1)) frames.push(chunk([{ text: piece }], false));
  if (pieces.length > 0) parts.push({ text: pieces.at(-1) });
  // Parallel calls: the signature rides on the first call's part only.
  for (const [index, call] of (round.calls ?? []).entries()) parts.push({ functionCall: { name: call.name, args: call.args }, ...(index === 0 && round.secret ? { thoughtSignature: round.secret } : {}) });
  if (!round.calls?.length && round.secret) parts.push({ text: '', thoughtSignature: round.secret });
  frames.push(chunk(parts, true));
  return frames;
}

function textPieces(round: ScriptRound): string[] {
  return round.deltas ?? halves(round.text ?? '');
}

function halves(text: string): [string, string] {
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

/** The frames of a text answer up to and including the first piece of its text: what a stall or an error interrupts. */
export function framesUntilText(protocol: WireProtocol, text = 'partial text'): string[] {
  const frames = framesFor(protocol, { text });
  const first = halves(text)[0];
  const at = frames.findIndex((frame) => frame.includes(first));
  // Gemini sends the text with its finish reason: without it the stream is still open.
  return frames.slice(0, at + 1).map((frame) => frame.replace('"finishReason":"STOP",', ''));
}

/** The frames of a tool-call round up to the one that names the tool: the call has been emitted. */
export function framesUntilCall(protocol: WireProtocol, call: { id: string; name: string; args: Record<string, unknown> }): string[] {
  const frames = framesFor(protocol, { calls: [call] });
  const at = frames.findIndex((frame) => frame.includes(`"${call.name}"`));
  return frames.slice(0, at + 1).map((frame) => frame.replace('"finishReason":"STOP",', ''));
}

/** A stream that starts normally (`started`: default, some text) and then carries the protocol's own error frame. */
export function midStreamError(protocol: WireProtocol, started: string[] = framesUntilText(protocol)): string[] {
  switch (protocol) {
    case 'openai-chat':
      return [...started, `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error' } })}\n\n`];
    case 'openai-responses':
      return [...started, `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: 99, code: 'server_error', message: 'The server had an error', param: null })}\n\n`];
    case 'anthropic':
      return [...started, `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`];
    case 'gemini':
      return [...started, `data: ${JSON.stringify({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })}\r\n\r\n`];
  }
}

/** The body each API answers a request too large for the model's context with (status 400). */
export function overflowBody(protocol: WireProtocol): unknown {
  switch (protocol) {
    case 'openai-chat':
    case 'openai-responses':
      return { error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
    case 'anthropic':
      return { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } };
    case 'gemini':
      return { error: { code: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } };
  }
}

/** A rate-limit body in each API's shape. */
export function rateLimitBody(protocol: WireProtocol): unknown {
  if (protocol === 'gemini') return { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.005s' }] } };
  if (protocol === 'anthropic') return { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } };
  return { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } };
}
