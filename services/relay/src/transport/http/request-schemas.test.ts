import { describe, expect, it } from 'vitest';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { MAX_COUNT, parseInput } from './parse-input.ts';
import { type BodyKind, checkBody, multipartFields } from './request-schemas.ts';

/** The refusal of a body (status, message, code), or 'ok'. */
function verdict(kind: BodyKind, body: unknown): 'ok' | { status: number; message: string; code: string } {
  try {
    checkBody(kind, body as Json);
    return 'ok';
  } catch (err) {
    if (!(err instanceof RelayError)) throw err;
    return { status: err.status, message: err.message, code: err.code };
  }
}
const at = (format: ClientFormat, mode: RelayMode = 'chat', more: Partial<BodyKind> = {}): BodyKind => ({
  format,
  mode,
  ...more,
});
const type = (field: string, want: string) => ({
  status: 400,
  message: `字段 ${field} 的类型无效，应为 ${want}`,
  code: 'invalid_field',
});
const range = (field: string) => ({
  status: 400,
  message: `字段 ${field} 的值无效，应为 0 到 ${MAX_COUNT} 之间的整数`,
  code: 'invalid_field',
});

describe('relay request schemas', () => {
  it('when the bodies real SDKs and agents send arrive, then each passes, unknown fields included', () => {
    const chat = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'data:,' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: null,
      temperature: 0.2,
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      some_vendor_field: { anything: [1, 'x'] },
    };
    expect(verdict(at('openai'), chat)).toBe('ok');
    expect(verdict(at('openai', 'chat', { playground: true }), { ...chat, group: 'vip' })).toBe('ok');
    expect(verdict(at('openai', 'completions'), { model: 'm', prompt: [[1, 2], 'x'], n: 2 })).toBe('ok');
    expect(verdict(at('openai', 'embeddings'), { model: 'm', input: [{ text: 'a' }, { image: 'u' }] })).toBe('ok');
    expect(verdict(at('openai', 'rerank'), { model: 'm', query: 'q', documents: ['a', { text: 'b' }], top_n: 3 })).toBe(
      'ok',
    );
    expect(verdict(at('openai', 'moderations'), { input: [{ type: 'text', text: 'x' }] })).toBe('ok');
    expect(
      verdict(at('responses'), {
        model: 'gpt-5',
        instructions: 'x',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'function_call', call_id: 'c', name: 'shell', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'ok' },
          { type: 'reasoning', summary: [], encrypted_content: 'e', content: null },
        ],
        tools: [{ type: 'function', name: 'shell' }, { type: 'web_search' }],
        reasoning: { effort: 'high', summary: 'auto' },
        text: { verbosity: 'low' },
        prompt_cache_key: 'k',
        store: false,
      }),
    ).toBe('ok');
    expect(
      verdict(at('claude'), {
        model: 'claude-sonnet-4-5',
        max_tokens: 32000,
        system: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 't', signature: 's' },
              { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
            ],
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a' }] }],
          },
        ],
        thinking: { type: 'enabled', budget_tokens: 2048 },
        metadata: { user_id: 'u' },
        tools: [
          { name: 'Bash', input_schema: { type: 'object' } },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
        tool_choice: { type: 'auto' },
        stream: true,
      }),
    ).toBe('ok');
    expect(
      verdict(at('gemini'), {
        systemInstruction: { parts: [{ text: 'x' }] },
        contents: [
          { role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: 'AA==' } }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
        ],
        generationConfig: { maxOutputTokens: 100, thinkingConfig: { thinkingBudget: -1 } },
        tools: [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {} }],
      }),
    ).toBe('ok');
  });

  it('when a field the relay reads has the wrong type, then the 400 names its path and the type wanted', () => {
    expect(verdict(at('openai'), { model: { $gt: '' } })).toEqual(type('model', 'string'));
    expect(verdict(at('openai'), { model: 'm', stream: 'yes' })).toEqual(type('stream', 'boolean'));
    expect(verdict(at('openai'), { model: 'm', messages: { $gt: 1 } })).toEqual(type('messages', 'array'));
    expect(verdict(at('openai'), { messages: [1] })).toEqual(type('messages[0]', 'object'));
    expect(verdict(at('openai'), { messages: [{ role: {}, content: 'x' }] })).toEqual(
      type('messages[0].role', 'string'),
    );
    expect(verdict(at('openai'), { messages: [{ role: 'user', content: { $gt: 1 } }] })).toEqual(
      type('messages[0].content', 'string 或 array'),
    );
    expect(verdict(at('openai'), { stream_options: 'yes' })).toEqual(type('stream_options', 'object'));
    expect(verdict(at('openai', 'chat', { playground: true }), { group: 1 })).toEqual(type('group', 'string'));
    expect(verdict(at('openai', 'embeddings'), { input: { text: 'x' } })).toEqual(type('input', 'string 或 array'));
    expect(verdict(at('openai', 'speech'), { input: ['x'] })).toEqual(type('input', 'string'));
    expect(verdict(at('openai', 'rerank'), { query: { text: 'q' } })).toEqual(type('query', 'string'));
    expect(verdict(at('openai', 'images'), { prompt: 7 })).toEqual(type('prompt', 'string'));
    expect(verdict(at('responses'), { previous_response_id: 5 })).toEqual(type('previous_response_id', 'string'));
    expect(verdict(at('responses'), { input: [{ type: 'message', role: 'user', content: 3 }] })).toEqual(
      type('input[0].content', 'string 或 array'),
    );
    expect(verdict(at('claude'), { system: [{ type: 'text', text: {} }] })).toEqual(type('system[0].text', 'string'));
    expect(verdict(at('claude'), { metadata: { user_id: 1 } })).toEqual(type('metadata.user_id', 'string'));
    expect(verdict(at('gemini'), { contents: [{ parts: [{ text: 1 }] }] })).toEqual(
      type('contents[0].parts[0].text', 'string'),
    );
    expect(verdict(at('gemini'), { generationConfig: [] })).toEqual(type('generationConfig', 'object'));
    // Inside one of a union's shapes, the inner field is named, not the union.
    expect(verdict(at('openai'), { messages: [{ role: 'user', content: [{ type: 'text', text: {} }] }] })).toEqual(
      type('messages[0].content[0].text', 'string'),
    );
    // A multipart upload's model field holding a file.
    expect(() => parseInput(multipartFields, { model: new File(['x'], 'm.txt') })).toThrow(
      '字段 model 的类型无效，应为 string',
    );
  });

  it('when a count the relay prices by is fractional, negative, huge or infinite, then the 400 says the range', () => {
    expect(verdict(at('openai'), { max_tokens: 1e308 })).toEqual(range('max_tokens'));
    expect(verdict(at('openai'), { max_tokens: Number.POSITIVE_INFINITY })).toEqual(range('max_tokens'));
    expect(verdict(at('openai'), { n: -1 })).toEqual(range('n'));
    expect(verdict(at('claude'), { max_tokens: 0.5 })).toEqual(range('max_tokens'));
    expect(verdict(at('claude'), { thinking: { type: 'enabled', budget_tokens: -5 } })).toEqual(
      range('thinking.budget_tokens'),
    );
    expect(verdict(at('responses'), { max_output_tokens: 2.5 })).toEqual(range('max_output_tokens'));
    expect(verdict(at('gemini'), { generationConfig: { maxOutputTokens: -5 } })).toEqual(
      range('generationConfig.maxOutputTokens'),
    );
    // A string is a type error, not coerced to a number.
    expect(verdict(at('openai'), { max_tokens: '5' })).toEqual(type('max_tokens', 'number'));
  });

  it('when a count route lacks the model or the prompt, then each API gets its own message', () => {
    expect(verdict(at('claude', 'chat', { count: true }), { messages: [] })).toEqual({
      status: 400,
      message: 'model: Field required',
      code: 'invalid_request',
    });
    expect(verdict(at('claude', 'chat', { count: true }), { model: 'm' })).toMatchObject({
      message: 'messages: Field required',
    });
    expect(verdict(at('responses', 'chat', { count: true }), { input: 'x' })).toEqual({
      status: 400,
      message: "Missing required parameter: 'model'.",
      code: 'missing_required_parameter',
    });
    expect(verdict(at('openai', 'responses_compact'), { input: [] })).toMatchObject({
      message: "Missing required parameter: 'model'.",
    });
    expect(verdict(at('gemini', 'chat', { count: true }), {})).toMatchObject({ message: 'contents is required' });
    expect(verdict(at('gemini', 'chat', { count: true }), { generateContentRequest: { contents: [] } })).toBe('ok');
    // The same bodies are fine where nothing is required.
    expect(verdict(at('claude'), {})).toBe('ok');
    expect(verdict(at('responses'), {})).toBe('ok');
  });
});
