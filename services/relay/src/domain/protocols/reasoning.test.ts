import { describe, expect, it } from 'vitest';
import type { ClientRequest } from '../exchange/build-request.ts';
import {
  claudeStreamToOpenAI,
  claudeToOpenAIRequest,
  claudeToOpenAIResponse,
  openaiStreamToClaude,
  openaiToClaudeRequest,
  openaiToClaudeResponse,
} from './claude.ts';
import {
  geminiToOpenAIRequest,
  geminiToOpenAIResponse,
  openaiToGeminiRequest,
  openaiToGeminiResponse,
} from './gemini.ts';
import { applyModelSuffix } from './model-suffix.ts';
import { type ChatRequest, type ChatResponse, openaiProtocol } from './openai.ts';
import { parseModelSuffix } from './reasoning.ts';
import { chatStreamToResponses, chatToResponsesResponse, responsesToChatRequest } from './responses.ts';

const user = (content: string) => ({ role: 'user', content });
const call = { model: 'x', stream: false, streamOptions: true };
/** A channel without configuration: the adaptor's protocol decides. */
const NO_CHANNEL = { type: 1, key: '', baseUrl: '', other: '', organization: '' };

describe('model-name suffixes (new-api)', () => {
  it('when a model carries a suffix its channel knows, then it is stripped and becomes reasoning', () => {
    expect(parseModelSuffix('claude-sonnet-4-5-thinking', 'claude')).toEqual({
      model: 'claude-sonnet-4-5',
      intent: { enabled: true, budgetShare: 0.8 },
      effortSuffix: false,
    });
    expect(parseModelSuffix('claude-opus-4-6-high', 'claude')?.intent).toMatchObject({ effort: 'high' });
    expect(parseModelSuffix('claude-sonnet-4-5-high', 'claude')).toBeUndefined();
    expect(parseModelSuffix('gemini-2.5-flash-thinking-2048', 'gemini')).toMatchObject({
      model: 'gemini-2.5-flash',
      intent: { enabled: true, budget: 2048, include: true },
    });
    // Clamped to what the model takes (2.5 Pro: 128-32768).
    expect(parseModelSuffix('gemini-2.5-pro-thinking-99999', 'gemini')?.intent.budget).toBe(32768);
    expect(parseModelSuffix('gemini-2.0-flash-thinking-exp-01-21', 'gemini')).toBeUndefined();
    expect(parseModelSuffix('gemini-2.5-flash-nothinking', 'gemini')).toMatchObject({
      model: 'gemini-2.5-flash',
      intent: { enabled: false },
    });
    expect(parseModelSuffix('gemini-3-pro-preview-low', 'gemini')?.intent).toMatchObject({ effort: 'low' });
    expect(parseModelSuffix('o3-mini-high', 'openai')).toMatchObject({ model: 'o3-mini', intent: { effort: 'high' } });
    expect(parseModelSuffix('gpt-5-minimal', 'responses')?.model).toBe('gpt-5');
    expect(parseModelSuffix('gpt-4o-high', 'openai')).toBeUndefined();
  });

  it('when the channel speaks the client format, then the body carries the reasoning and the raw text is dropped', () => {
    const body = { model: 'claude-sonnet-4-5-thinking', max_tokens: 1000, temperature: 0.3, messages: [user('hi')] };
    const req: ClientRequest = {
      format: 'claude',
      mode: 'chat',
      model: body.model,
      stream: false,
      body,
      raw: Buffer.from(JSON.stringify(body)),
      includeUsage: false,
    };
    const canon = () => claudeToOpenAIRequest(body);
    const a = applyModelSuffix(req, { protocol: 'claude' }, NO_CHANNEL, body.model, canon);
    expect(a.upstreamModel).toBe('claude-sonnet-4-5');
    expect(a.req.raw).toBeUndefined();
    // 1280 at least, 80% of it thinking; temperature dropped (Anthropic allows only 1).
    expect(a.req.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1280,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [user('hi')],
    });
    // Translated: the canonical request carries it to the channel's protocol.
    const t = applyModelSuffix(
      { ...req, format: 'openai', body: { model: 'gemini-2.5-flash-thinking-2048', messages: [user('hi')] } },
      { protocol: 'gemini' },
      NO_CHANNEL,
      'gemini-2.5-flash-thinking-2048',
      () => ({ model: 'gemini-2.5-flash-thinking-2048', messages: [user('hi')] }),
    );
    expect(t.upstreamModel).toBe('gemini-2.5-flash');
    expect(
      (openaiToGeminiRequest(t.canonical(), t.upstreamModel).generationConfig as { thinkingConfig: unknown })
        .thinkingConfig,
    ).toEqual({ includeThoughts: true, thinkingBudget: 2048 });
  });
});

describe('reasoning between formats', () => {
  it('when a chat request asks an effort of Claude, then thinking has a budget below max_tokens and no temperature', () => {
    const c: ChatRequest = {
      model: 'c',
      messages: [user('hi')],
      reasoning_effort: 'high',
      temperature: 0.2,
      top_p: 0.5,
      max_tokens: 1000,
    };
    const out = openaiToClaudeRequest(c, 'claude-sonnet-4-5');
    expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(out.max_tokens).toBe(5096);
    expect(out.temperature).toBeUndefined();
    expect(out.top_p).toBeUndefined();
    // A forced tool choice and thinking cannot go together: the tool choice is the client's.
    const forced = openaiToClaudeRequest(
      { ...c, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' },
      'claude-sonnet-4-5',
    );
    expect(forced.thinking).toBeUndefined();
    expect(openaiToClaudeRequest({ ...c, reasoning_effort: 'low' }, 'claude-opus-4-7')).toMatchObject({
      thinking: { type: 'adaptive', display: 'summarized' },
      output_config: { effort: 'low' },
    });
    // Claude 5 takes adaptive thinking only, without sampling settings.
    const five = openaiToClaudeRequest(c, 'claude-sonnet-5-5');
    expect(five).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' }, max_tokens: 1000 });
    expect(five).not.toHaveProperty('temperature');
    expect(parseModelSuffix('claude-opus-5-5-high', 'claude')?.model).toBe('claude-opus-5-5');
    expect(
      openaiToClaudeRequest({ model: 'm', messages: [user('x')], temperature: 0.7 }, 'claude-sonnet-5'),
    ).not.toHaveProperty('temperature');
  });

  it('when Claude answers with signed thinking, then chat gets reasoning_content and the signature, and sends it back as a thinking block', () => {
    const res = claudeToOpenAIResponse(
      {
        id: 'msg_1',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'SIG' },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 3, output_tokens: 4 },
      },
      'm',
    );
    const msg = res.choices[0]?.message;
    expect(msg?.reasoning_content).toBe('hmm');
    expect(msg?.reasoning_details).toEqual([
      { type: 'reasoning.text', text: 'hmm', signature: 'SIG', format: 'anthropic-claude-v1', index: 0 },
    ]);
    const next = openaiToClaudeRequest(
      {
        model: 'm',
        reasoning_effort: 'low',
        messages: [user('q'), msg as never, { role: 'tool', tool_call_id: 'toolu_1', content: 'ok' }],
      },
      'claude-sonnet-4-5',
    );
    const turn = (next.messages as { role: string; content: { type: string }[] }[])[1];
    expect(turn?.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(turn?.content[0]).toEqual({ type: 'thinking', thinking: 'hmm', signature: 'SIG' });
    expect(next.thinking).toEqual({ type: 'enabled', budget_tokens: 1280 });
    // Without the signed thinking the turn cannot be sent with thinking on: thinking is left off.
    const unsigned = openaiToClaudeRequest(
      { model: 'm', reasoning_effort: 'low', messages: [user('q'), { ...msg, reasoning_details: undefined } as never] },
      'claude-sonnet-4-5',
    );
    expect(unsigned.thinking).toBeUndefined();
  });

  it('when Claude streams a signature, then the chat stream carries it and a text-less detail takes reasoning_content back', () => {
    const d = claudeStreamToOpenAI('m');
    const ev = (o: unknown) => d.onEvent({ data: JSON.stringify(o) } as never);
    ev({ type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 1 } } });
    const think = ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'abc' } });
    const sig = ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'S2' } });
    expect(think[0]?.choices[0]?.delta.reasoning_content).toBe('abc');
    expect(sig[0]?.choices[0]?.delta.reasoning_details).toEqual([
      { type: 'reasoning.text', text: '', signature: 'S2', format: 'anthropic-claude-v1', index: 0 },
    ]);
    const back = openaiToClaudeRequest(
      {
        model: 'm',
        messages: [
          user('q'),
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'abc',
            reasoning_details: sig[0]?.choices[0]?.delta.reasoning_details,
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        ],
      },
      'claude-x',
    );
    expect((back.messages as { content: unknown[] }[])[1]?.content[0]).toEqual({
      type: 'thinking',
      thinking: 'abc',
      signature: 'S2',
    });
  });

  it('when a Claude client asks for thinking, then an OpenAI reasoning model gets an effort, others nothing, and the answer has a thinking block', () => {
    const req = claudeToOpenAIRequest({
      model: 'm',
      max_tokens: 9000,
      thinking: { type: 'enabled', budget_tokens: 5000 },
      messages: [user('hi')],
    });
    expect(openaiProtocol.request(req, { ...call, model: 'o3' })).toMatchObject({ reasoning_effort: 'high' });
    expect(JSON.parse(JSON.stringify(openaiProtocol.request(req, { ...call, model: 'gpt-4o' })))).not.toHaveProperty(
      'reasoning_effort',
    );
    const g = openaiToGeminiRequest(req, 'gemini-2.5-flash');
    expect((g.generationConfig as { thinkingConfig: unknown }).thinkingConfig).toEqual({
      includeThoughts: true,
      thinkingBudget: 5000,
    });
    // Claude Code's own shape (adaptive thinking, the effort in output_config) on a GPT-5 channel.
    const adaptive = claudeToOpenAIRequest({
      model: 'm',
      max_tokens: 32000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      messages: [user('hi')],
    });
    expect(openaiProtocol.request(adaptive, { ...call, model: 'gpt-5.5' })).toMatchObject({
      reasoning_effort: 'medium',
    });
    expect(
      JSON.parse(JSON.stringify(openaiProtocol.request(adaptive, { ...call, model: 'gpt-4.1' }))),
    ).not.toHaveProperty('reasoning_effort');
    const res: ChatResponse = {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'o3',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'yes', reasoning_content: 'why' }, finish_reason: 'stop' },
      ],
    };
    expect(openaiToClaudeResponse(res, 'm', undefined).content).toEqual([
      { type: 'thinking', thinking: 'why', signature: '' },
      { type: 'text', text: 'yes' },
    ]);
    const enc = openaiStreamToClaude('m', 0);
    const text =
      enc.onChunk({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta: { reasoning_content: 'why' }, finish_reason: null }],
      }) +
      enc.onChunk({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta: { content: 'yes' }, finish_reason: 'stop' }],
      }) +
      enc.end({ promptTokens: 1, completionTokens: 2 });
    const types = [...text.matchAll(/^data: (.*)$/gm)].map((m) => {
      const e = JSON.parse(m[1] as string);
      return e.delta?.type ?? e.content_block?.type ?? e.type;
    });
    expect(types).toEqual([
      'message_start',
      'thinking',
      'thinking_delta',
      'signature_delta',
      'content_block_stop',
      'text',
      'text_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('when Gemini thinks, then thoughts are reasoning both ways and thinkingConfig follows the effort', () => {
    const res = geminiToOpenAIResponse(
      {
        candidates: [
          { content: { parts: [{ text: 'ponder', thought: true }, { text: 'answer' }] }, finishReason: 'STOP' },
        ],
      },
      'g',
    );
    expect(res.choices[0]?.message).toMatchObject({ content: 'answer', reasoning_content: 'ponder' });
    expect(openaiToGeminiResponse(res, 'g', undefined)).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'ponder', thought: true }, { text: 'answer' }] } }],
    });
    const ask = (model: string, effort: string) =>
      (
        openaiToGeminiRequest({ model, messages: [user('x')], reasoning_effort: effort }, model).generationConfig as {
          thinkingConfig: unknown;
        }
      ).thinkingConfig;
    expect(ask('gemini-2.5-flash', 'low')).toEqual({ includeThoughts: true, thinkingBudget: 4915 });
    expect(ask('gemini-3-pro-preview', 'medium')).toEqual({ includeThoughts: true, thinkingLevel: 'high' });
    expect(ask('gemini-2.5-flash', 'none')).toEqual({ thinkingBudget: 0 });
    // A Gemini client's budget reaches Claude as its budget.
    const fromGemini = geminiToOpenAIRequest(
      {
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        generationConfig: { maxOutputTokens: 8000, thinkingConfig: { thinkingBudget: 3000, includeThoughts: true } },
      },
      'claude-sonnet-4-5',
      false,
    );
    expect(openaiToClaudeRequest(fromGemini, 'claude-sonnet-4-5')).toMatchObject({
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 3000 },
    });
  });

  it('when a Responses client gets Claude thinking, then the reasoning item keeps the signature and brings it back', () => {
    const res: ChatResponse = {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            reasoning_content: 'hmm',
            reasoning_details: [
              { type: 'reasoning.text', text: 'hmm', signature: 'SIG', format: 'anthropic-claude-v1', index: 0 },
            ],
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const out = chatToResponsesResponse(res, 'm', { promptTokens: 1, completionTokens: 1 });
    const items = out.output as Record<string, unknown>[];
    expect(items[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'hmm' }],
      encrypted_content: 'SIG',
    });
    const next = responsesToChatRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'q' },
        ...items,
        { type: 'function_call_output', call_id: 'toolu_1', output: 'ok' },
      ],
    });
    const claude = openaiToClaudeRequest(next, 'claude-x');
    expect((claude.messages as { content: unknown[] }[])[1]?.content[0]).toEqual({
      type: 'thinking',
      thinking: 'hmm',
      signature: 'SIG',
    });

    // Streamed: the signature closes the reasoning item with its encrypted_content.
    const enc = chatStreamToResponses('m');
    const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 0, model: 'm' };
    const text =
      enc.onChunk({ ...base, choices: [{ index: 0, delta: { reasoning_content: 'hmm' }, finish_reason: null }] }) +
      enc.onChunk({
        ...base,
        choices: [
          {
            index: 0,
            delta: { reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'SIG' }] },
            finish_reason: null,
          },
        ],
      }) +
      enc.onChunk({ ...base, choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] }) +
      enc.end({ promptTokens: 1, completionTokens: 1 });
    const done = [...text.matchAll(/^data: (.*)$/gm)]
      .map((m) => JSON.parse(m[1] as string))
      .find((e) => e.type === 'response.completed');
    expect(done.response.output[0]).toMatchObject({
      type: 'reasoning',
      encrypted_content: 'SIG',
      summary: [{ text: 'hmm' }],
    });
    expect(done.response.output[1]).toMatchObject({ type: 'message' });
  });
});
