import { describe, expect, it } from 'vitest';
import type { ChatChunk, ChatRequest } from '../protocols/openai.ts';
import {
  bodyWithSystemPrompt,
  chatWithSystemPrompt,
  overrideHeaders,
  parseChannelOverrides,
  thinkingToContentStream,
} from './channel-overrides.ts';
import { UpstreamFailure } from './failure.ts';
import { applyParamOverride, parseParamOverride } from './param-override.ts';

const run = (override: unknown, body: Record<string, unknown>, context: Record<string, unknown> = {}) => {
  const parsed = parseParamOverride(JSON.stringify(override));
  if (!parsed) throw new Error('not parsed');
  const headers: Record<string, string | null> = {};
  applyParamOverride(body, parsed, context, headers);
  return { body, headers };
};

describe('param_override', () => {
  it('when the override is a plain object, then its top-level keys replace the body values', () => {
    const { body } = run({ temperature: 0.2, metadata: { a: 1 } }, { model: 'm', temperature: 1, metadata: { b: 2 } });
    expect(body).toEqual({ model: 'm', temperature: 0.2, metadata: { a: 1 } });
  });

  it('when operations set nested paths, delete keys and move values, then the body changes that way', () => {
    const { body } = run(
      {
        operations: [
          { path: 'reasoning.effort', mode: 'set', value: 'high' },
          { path: 'stream_options.include_usage', mode: 'delete' },
          { path: 'messages.-1.content', mode: 'append', value: ' (be brief)' },
          { path: 'top_p', mode: 'set', value: 0.5, keep_origin: true },
          { mode: 'move', from: 'user', to: 'metadata.user_id' },
          { path: 'a\\.b', mode: 'set', value: 1 },
        ],
      },
      {
        top_p: 0.9,
        user: 'u1',
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi' },
        ],
      },
    );
    expect(body).toEqual({
      top_p: 0.9,
      stream_options: {},
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi (be brief)' },
      ],
      reasoning: { effort: 'high' },
      metadata: { user_id: 'u1' },
      'a.b': 1,
    });
  });

  it('when an operation has conditions, then it runs only when they hold (body first, then the context)', () => {
    const ops = {
      operations: [
        {
          path: 'max_tokens',
          mode: 'set',
          value: 100,
          conditions: [
            { path: 'model', mode: 'prefix', value: 'gpt-4' },
            { path: 'is_stream', mode: 'full', value: true },
          ],
          logic: 'AND',
        },
      ],
    };
    expect(run(ops, { model: 'gpt-4o' }, { is_stream: true }).body.max_tokens).toBe(100);
    expect(run(ops, { model: 'gpt-4o' }, { is_stream: false }).body.max_tokens).toBeUndefined();
    expect(run(ops, { model: 'o3' }, { is_stream: true }).body.max_tokens).toBeUndefined();
  });

  it('when an operation is return_error or a header operation, then the call is refused or its headers change', () => {
    let err: unknown;
    try {
      run({ operations: [{ mode: 'return_error', value: { message: 'no images here', status_code: 422 } }] }, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).status).toBe(422);
    expect((err as UpstreamFailure).kind).toBe('refused');
    const { headers } = run(
      {
        operations: [
          { path: 'X-Trace', mode: 'set_header', value: 'on' },
          { path: 'OpenAI-Beta', mode: 'delete_header' },
        ],
      },
      {},
    );
    expect(headers).toEqual({ 'x-trace': 'on', 'openai-beta': null });
  });
});

describe('header_override and setting', () => {
  it('when header_override names a header, then it replaces the header whatever its case, with {api_key} filled', () => {
    const out = overrideHeaders(
      { Authorization: 'Bearer k1', 'content-type': 'application/json', 'openai-beta': 'x' },
      { authorization: 'Token {api_key}', 'X-Api-Key': '{api_key}' },
      { 'openai-beta': null },
      'k1',
    );
    expect(out).toEqual({ 'content-type': 'application/json', authorization: 'Token k1', 'X-Api-Key': 'k1' });
  });

  it('when a channel has a system prompt, then a request without one gets it and one with one keeps its own unless override', () => {
    const req: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(chatWithSystemPrompt(req, { system_prompt: 'Be kind' }).messages[0]).toEqual({
      role: 'system',
      content: 'Be kind',
    });
    const withOwn: ChatRequest = { model: 'm', messages: [{ role: 'system', content: 'Mine' }] };
    expect(chatWithSystemPrompt(withOwn, { system_prompt: 'Be kind' }).messages[0]?.content).toBe('Mine');
    expect(
      chatWithSystemPrompt(withOwn, { system_prompt: 'Be kind', system_prompt_override: true }).messages[0]?.content,
    ).toBe('Be kind\nMine');
    expect(withOwn.messages[0]?.content).toBe('Mine');
    expect(bodyWithSystemPrompt('claude', { messages: [] }, { system_prompt: 'P' }).system).toBe('P');
    expect(
      bodyWithSystemPrompt(
        'gemini',
        { systemInstruction: { parts: [{ text: 'S' }] } },
        {
          system_prompt: 'P',
          system_prompt_override: true,
        },
      ).systemInstruction,
    ).toEqual({ parts: [{ text: 'P' }, { text: 'S' }] });
  });

  it('when thinking_to_content is on, then reasoning deltas become content inside <think> tags', () => {
    const map = thinkingToContentStream();
    const chunk = (delta: Record<string, unknown>): ChatChunk => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: null }],
    });
    const texts = [
      chunk({ reasoning_content: 'let me ' }),
      chunk({ reasoning_content: 'think' }),
      chunk({ content: 'Answer' }),
      chunk({ content: '!' }),
    ].map((c) => map(c).choices[0]?.delta.content);
    expect(texts.join('')).toBe('<think>\nlet me think\n</think>\nAnswer!');
  });

  it('when a channel has no overrides, then nothing is parsed for it', () => {
    expect(parseChannelOverrides({ paramOverride: '', headerOverride: '', setting: '', settings: '' })).toBeUndefined();
    expect(parseChannelOverrides({ setting: '{"force_format":true}' })?.setting.force_format).toBe(true);
  });
});
