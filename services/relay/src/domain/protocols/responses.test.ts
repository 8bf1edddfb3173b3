import { describe, expect, it } from 'vitest';
import { type ChatChunk, chunk } from './openai.ts';
import {
  chatStreamToResponses,
  chatToResponsesResponse,
  responsesStreamToChat,
  responsesToChatRequest,
} from './responses.ts';
import { createSseParser } from './sse.ts';

describe('Responses requests translated to chat', () => {
  it('when a request carries instructions, items, tools, a forced tool, a JSON schema and reasoning, then each has its chat field', () => {
    const c = responsesToChatRequest({
      model: 'm',
      instructions: 'Be brief',
      input: [
        { role: 'developer', content: 'No jokes' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is here?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
        { type: 'function_call', call_id: 'c1', name: 'look', arguments: '{"a":1}' },
        { type: 'function_call', call_id: 'c2', name: 'look', arguments: '{"a":2}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call_output', call_id: 'c2', output: 'two' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ],
      tools: [
        { type: 'function', name: 'look', description: 'Look', parameters: { type: 'object' }, strict: true },
        { type: 'web_search_preview' },
      ],
      tool_choice: { type: 'function', name: 'look' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      reasoning: { effort: 'high' },
      max_output_tokens: 300,
      temperature: 0.2,
      stream: true,
    });
    expect(c).toEqual({
      model: 'm',
      stream: true,
      max_tokens: 300,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'system', content: 'No jokes' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'look', arguments: '{"a":1}' } },
            { id: 'c2', type: 'function', function: { name: 'look', arguments: '{"a":2}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'tool', tool_call_id: 'c2', content: 'two' },
      ],
      // Built-in tools need an OpenAI channel: dropped here.
      tools: [
        {
          type: 'function',
          function: { name: 'look', description: 'Look', parameters: { type: 'object' }, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'look' } },
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'high',
    });
  });
});

/** Encodes chat chunks as Responses events and parses them back into objects. */
function encode(chunks: ChatChunk[], finish: string): Record<string, unknown>[] {
  const enc = chatStreamToResponses('client-model');
  let text = '';
  for (const c of chunks) text += enc.onChunk(c);
  text += enc.onChunk(chunk('x', 'm', {}, finish));
  text += enc.end({ promptTokens: 7, completionTokens: 9 });
  const parser = createSseParser();
  const events = [...parser.push(text), ...parser.end()];
  for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
  return events.map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

describe('chat streams encoded as Responses events', () => {
  it('when a stream thinks, answers and calls a tool, then the items open and close in order with contiguous sequence numbers', () => {
    const events = encode(
      [
        chunk('x', 'm', { role: 'assistant', reasoning_content: 'Hmm' }),
        chunk('x', 'm', { content: 'Hello ' }),
        chunk('x', 'm', { content: 'there' }),
        chunk('x', 'm', {
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a"' } }],
        }),
        chunk('x', 'm', { tool_calls: [{ index: 0, function: { arguments: ':1}' } as never }] }),
      ],
      'tool_calls',
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.at(-1)?.response as { output: unknown[]; usage: unknown; status: string; model: string };
    expect(done.status).toBe('completed');
    expect(done.model).toBe('client-model');
    expect(done.output).toMatchObject([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm' }] },
      { type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hello there' }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' },
    ]);
    expect(done.usage).toEqual({
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 16,
    });
  });

  it('when a stream stops at the length limit, then it ends with response.incomplete (max_output_tokens)', () => {
    const events = encode([chunk('x', 'm', { content: 'cut' })], 'length');
    const last = events.at(-1) as { type: string; response: { status: string; incomplete_details: unknown } };
    expect(last.type).toBe('response.incomplete');
    expect(last.response.status).toBe('incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('when Responses events are decoded back to chat chunks, then the text, the tool call and the usage survive', () => {
    const enc = chatStreamToResponses('m');
    const text =
      enc.onChunk(chunk('x', 'm', { content: 'Hi' })) +
      enc.onChunk(
        chunk('x', 'm', {
          tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'g', arguments: '{}' } }],
        }),
      ) +
      enc.onChunk(chunk('x', 'm', {}, 'tool_calls')) +
      enc.end({ promptTokens: 3, completionTokens: 4 });
    const decode = responsesStreamToChat('m');
    const parser = createSseParser();
    const chunks = [...parser.push(text), ...parser.end()].flatMap((e) => decode(e));
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(content).toBe('Hi');
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_9', function: { name: 'g' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe('{}');
    const last = chunks.at(-1);
    expect(last?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(last?.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
  });
});

describe('chat answers as Responses objects', () => {
  it('when a chat answer has reasoning, text and a length stop, then the object is incomplete with both items and the billed usage', () => {
    const r = chatToResponsesResponse(
      {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'up',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Partial', reasoning_content: 'Thought' },
            finish_reason: 'length',
          },
        ],
      },
      'client-model',
      { promptTokens: 5, completionTokens: 6, cachedTokens: 2 },
    );
    expect(r).toMatchObject({
      object: 'response',
      status: 'incomplete',
      model: 'client-model',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thought' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Partial' }] },
      ],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 2 }, output_tokens: 6, total_tokens: 11 },
    });
    expect(String(r.id)).toMatch(/^resp_/);
  });
});
