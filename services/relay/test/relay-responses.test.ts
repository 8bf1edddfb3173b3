/**
 * OpenAI's Responses API end to end with the official `openai` SDK (client.responses.*) through
 * the gateway: passed through to an OpenAI channel (whole, streamed, retrieve, delete, owners
 * only) and translated to chat for a Claude channel (text, tools, streamed typed events, reasoning
 * items keeping Claude's signed thinking through a tool loop); /v1/responses/compact forwarded
 * to OpenAI channels (documented fields only) and refused elsewhere with a 400, and
 * /v1/responses/input_tokens counted by OpenAI channels and estimated elsewhere; channel affinity
 * (one prompt_cache_key stays on one channel, moves when it is disabled, hits counted). Checks
 * the answers, what the fakes received, the wallet charge and the log rows.
 */
import { eventually } from '@aigw/testkit';
import { FAKE_THINKING, type FakeProvider, startFakeProvider, thinkingSignature } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let openaiFake: FakeProvider;
let claudeFake: FakeProvider;
const REPLY = 'The quick brown fox jumps';
const PROMPT_TOKENS = 12;

beforeAll(async () => {
  s = await startRelayStack();
  openaiFake = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: REPLY, promptTokens: PROMPT_TOKENS });
  claudeFake = await startFakeProvider({
    kind: 'anthropic',
    key: 'up-claude',
    reply: REPLY,
    promptTokens: PROMPT_TOKENS,
  });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([openaiFake?.close(), claudeFake?.close()]);
});

/** quota = (prompt + completion x completion ratio) x model ratio x group ratio (default group 1). */
const quotaOf = (prompt: number, completion: number, modelRatio: number, completionRatio: number) =>
  Math.max(1, Math.round((prompt + completion * completionRatio) * modelRatio));

async function expectCharged(userId: number, expected: number): Promise<void> {
  const used = await eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0,
    (v) => v >= expected,
    10_000,
  );
  expect(used).toBe(expected);
}

async function logsOf(userId: number, model: string, count: number) {
  const res = await eventually(
    () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
    (r) => r.items.length >= count,
    10_000,
  );
  expect(res.items).toHaveLength(count);
  return res.items;
}

describe('the Responses API', () => {
  it('when the OpenAI SDK creates responses on an OpenAI channel (whole and streamed), then they pass through, are billed from their usage, and can be retrieved and deleted by their owner only', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const other = await userWithToken(s);
    const channelId = await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });

    const whole = await client.responses.create({ model, instructions: 'Be brief', input: 'Say something' });
    expect(whole.object).toBe('response');
    expect(whole.output_text).toBe(REPLY);
    expect(whole.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: 5 });
    const sent = openaiFake.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses');
    expect(sent?.body).toMatchObject({ model, instructions: 'Be brief', input: 'Say something' });
    // No chat-only field was added to a Responses request.
    expect((sent?.body as Record<string, unknown>).stream_options).toBeUndefined();
    const each = quotaOf(PROMPT_TOKENS, 5, 0.075, 4);
    await expectCharged(u.userId, each);

    const stream = await client.responses.create({ model, input: 'Say something', stream: true });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    expect(text).toBe(REPLY);
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_item.added');
    expect(types.at(-1)).toBe('response.completed');
    expect(completed?.usage?.output_tokens).toBe(5);
    await expectCharged(u.userId, 2 * each);

    const logs = await logsOf(u.userId, model, 2);
    for (const l of logs)
      expect(l).toMatchObject({ channel: channelId, promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: each });
    expect(logs.filter((l) => l.isStream)).toHaveLength(1);

    // Stored upstream: retrievable through the relay by its owner, not by another user.
    const again = await client.responses.retrieve(whole.id);
    expect(again.id).toBe(whole.id);
    expect(again.output_text).toBe(REPLY);
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    await expect(stranger.responses.retrieve(whole.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.delete(whole.id)).rejects.toMatchObject({ status: 404 });
    const items = await client.responses.inputItems.list(whole.id);
    expect(items.data.length).toBeGreaterThan(0);

    await client.responses.delete(whole.id);
    expect(openaiFake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/responses/${whole.id}` });
    const gone = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    await expect(gone.responses.retrieve(whole.id)).rejects.toMatchObject({ status: 404 });
    // Retrieve and delete are free.
    await expectCharged(u.userId, 2 * each);
  });

  it('when the OpenAI SDK creates responses on a Claude channel, then they are translated both ways (text, tools, typed stream events) and billed', async () => {
    const model = modelName('claude-3-5-sonnet');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });

    const whole = await client.responses.create({
      model,
      instructions: 'Answer in English',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
      max_output_tokens: 200,
    });
    expect(whole.output_text).toBe(REPLY);
    expect(whole.status).toBe('completed');
    expect(whole.usage).toMatchObject({
      input_tokens: PROMPT_TOKENS,
      output_tokens: 5,
      total_tokens: PROMPT_TOKENS + 5,
    });
    const sent = claudeFake.requests.at(-1);
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.body).toMatchObject({
      model,
      max_tokens: 200,
      system: 'Answer in English',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
    const each = quotaOf(PROMPT_TOKENS, 5, 1.5, 5);
    await expectCharged(u.userId, each);

    // Streamed through the SDK's helper, which checks that every event fits the ones before it.
    const stream = client.responses.stream({ model, input: 'Hello' });
    let text = '';
    stream.on('response.output_text.delta', (ev) => {
      text += ev.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe(REPLY);
    expect(final.output_text).toBe(REPLY);
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens).toBe(5);
    await expectCharged(u.userId, 2 * each);

    // Tools: the call comes back as a function_call item; its output goes back as a tool result.
    claudeFake.set({ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } });
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        description: 'Weather of a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: false,
      },
    ];
    const call = await client.responses.create({ model, input: 'Weather in Paris?', tools });
    const fc = call.output.find((o) => o.type === 'function_call');
    expect(fc).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect((claudeFake.requests.at(-1)?.body as { tools?: unknown[] }).tools).toEqual([
      { name: 'get_weather', description: 'Weather of a city', input_schema: tools[0]?.parameters },
    ]);

    const streamedCall = client.responses.stream({ model, input: 'Weather in Paris?', tools });
    let args = '';
    streamedCall.on('response.function_call_arguments.delta', (ev) => {
      args += ev.delta;
    });
    const finalCall = await streamedCall.finalResponse();
    expect(args).toBe('{"city":"Paris"}');
    expect(finalCall.output.find((o) => o.type === 'function_call')).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    claudeFake.set({ toolCall: undefined });

    if (fc?.type !== 'function_call') throw new Error('no function call');
    const answer = await client.responses.create({
      model,
      tools,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: fc.call_id, name: fc.name, arguments: fc.arguments },
        { type: 'function_call_output', call_id: fc.call_id, output: 'Sunny, 22 C' },
      ],
    });
    expect(answer.output_text).toBe(REPLY);
    const messages = (claudeFake.requests.at(-1)?.body as { messages: unknown[] }).messages;
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: fc.call_id, name: 'get_weather', input: { city: 'Paris' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: fc.call_id, content: 'Sunny, 22 C' }] },
    ]);

    // Nothing is kept for a translated response: retrieving it is a 404 in OpenAI's shape.
    await expect(client.responses.retrieve(whole.id)).rejects.toMatchObject({
      status: 404,
      error: { type: 'invalid_request_error' },
    });
    const logs = await logsOf(u.userId, model, 5);
    expect(logs.filter((l) => l.isStream)).toHaveLength(2);
  });

  it('when Codex-style reasoning.effort goes to a Claude channel, then Claude thinks, the reasoning item keeps the signature, and the next turn sends it back', async () => {
    const model = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    const tools = [
      {
        type: 'function' as const,
        name: 'shell',
        parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
        strict: false,
      },
    ];
    claudeFake.set({ toolCall: { name: 'shell', arguments: { cmd: 'ls' } } });
    try {
      const stream = client.responses.stream({
        model,
        reasoning: { effort: 'medium' },
        include: ['reasoning.encrypted_content'],
        store: false,
        tools,
        input: 'List the files',
      });
      const first = await stream.finalResponse();
      expect(claudeFake.requests.at(-1)?.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
      const reasoning = first.output.find((o) => o.type === 'reasoning');
      expect(reasoning).toMatchObject({
        summary: [{ type: 'summary_text', text: FAKE_THINKING }],
        encrypted_content: thinkingSignature(FAKE_THINKING),
      });
      const call = first.output.find((o) => o.type === 'function_call');
      if (call?.type !== 'function_call' || !reasoning) throw new Error('no call or reasoning');
      claudeFake.set({ toolCall: undefined });
      // Codex sends the whole turn back (store: false): the fake refuses it without the signed thinking.
      const second = await client.responses.create({
        model,
        reasoning: { effort: 'medium' },
        store: false,
        tools,
        input: [
          { role: 'user', content: 'List the files' },
          reasoning as OpenAI.Responses.ResponseReasoningItem,
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' },
        ],
      });
      expect(second.output_text).toBe(REPLY);
      const turn = (claudeFake.requests.at(-1)?.body as { messages: { content: unknown[] }[] }).messages[1];
      expect(turn?.content[0]).toEqual({
        type: 'thinking',
        thinking: FAKE_THINKING,
        signature: thinkingSignature(FAKE_THINKING),
      });
    } finally {
      claudeFake.set({ toolCall: undefined });
    }
  });

  it('when a small wallet continues a stored response with previous_response_id, then the stored context is reserved too: a turn the wallet cannot cover with its context is refused, not served below zero', async () => {
    const model = modelName('gpt-4o-mini');
    // The upstream reads a long stored conversation again as prompt: 3,000 tokens each turn.
    const long = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: REPLY, promptTokens: 3_000 });
    try {
      // gpt-4o-mini: ratio 0.075, completion 4. Turn 1 costs (3,000 + 5 x 4) x 0.075 = 227 and
      // leaves 150; turn 2 reserves (its text + 3,005 stored + 50 x 4) x 0.075 > 240 (without the
      // stored context: (500 + 50 x 4) x 0.075 = 53, served, and the wallet would end at -77).
      const u = await userWithToken(s, { quota: 377 });
      await createChannel(s, { type: 1, baseUrl: long.url, key: 'up-openai', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const turn = (input: string, previous?: string) =>
        fetch(`${s.stack.relayUrl}/v1/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model,
            input,
            max_output_tokens: 50,
            ...(previous ? { previous_response_id: previous } : {}),
          }),
        });
      const first = await turn('Turn 1');
      expect(first.status).toBe(200);
      const id = ((await first.json()) as { id: string }).id;
      await expectCharged(u.userId, 227);
      const second = await turn('Turn 2', id);
      const body = (await second.json()) as { error?: { message: string } };
      expect(second.status).toBe(403);
      expect(body.error?.message).toBe('用户额度不足');
      expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.quota).toBe(150);
    } finally {
      await long.close();
    }
  });

  it('when a conversation continues with previous_response_id and several OpenAI channels serve the model, then each turn goes to the channel that holds it', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const second = await startFakeProvider({
      kind: 'openai',
      key: 'up-openai',
      reply: REPLY,
      promptTokens: PROMPT_TOKENS,
    });
    try {
      const a = await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
      const b = await createChannel(s, { type: 1, baseUrl: second.url, key: 'up-openai', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });

      let previous = (await client.responses.create({ model, input: 'Turn 0' })).id;
      for (let turn = 1; turn <= 6; turn++) {
        const r = await client.responses.create({ model, input: `Turn ${turn}`, previous_response_id: previous });
        expect(r.output_text).toBe(REPLY);
        previous = r.id;
      }
      const logs = await logsOf(u.userId, model, 7);
      const channels = new Set(logs.map((l) => l.channel));
      expect(channels.size).toBe(1);
      expect([a, b]).toContain([...channels][0]);
    } finally {
      await second.close();
    }
  });

  it('when the OpenAI SDK creates responses on a Gemini channel, then they are translated (whole and streamed) and billed', async () => {
    const gemini = await startFakeProvider({
      kind: 'gemini',
      key: 'up-gemini',
      reply: REPLY,
      promptTokens: PROMPT_TOKENS,
    });
    try {
      const model = modelName('gemini-2.5-pro');
      const u = await userWithToken(s);
      await createChannel(s, { type: 24, baseUrl: gemini.url, key: 'up-gemini', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });

      const whole = await client.responses.create({ model, instructions: 'Be brief', input: 'Hello' });
      expect(whole.output_text).toBe(REPLY);
      expect(whole.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: 5 });
      expect(gemini.requests.at(-1)?.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Be brief' }] },
        contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      });
      const streamed = await client.responses.stream({ model, input: 'Hello' }).finalResponse();
      expect(streamed.output_text).toBe(REPLY);
      expect(gemini.requests.at(-1)?.path).toContain(':streamGenerateContent');
      const each = quotaOf(PROMPT_TOKENS, 5, 0.625, 8);
      await expectCharged(u.userId, 2 * each);
    } finally {
      await gemini.close();
    }
  });
});

describe('compaction and input token counts', () => {
  it('when Codex compacts on an OpenAI channel, then the documented fields reach /v1/responses/compact and it is billed from its usage; on a Claude channel it is a 400 in OpenAI shape, unbilled', async () => {
    const model = modelName('gpt-4o-mini');
    const claudeModel = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: claudeModel });
    await routable(s.stack.relayUrl, u.key, model);
    await routable(s.stack.relayUrl, u.key, claudeModel);
    const post = (path: string, body: unknown) =>
      fetch(`${s.stack.gatewayUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // As Codex sends it: tools, reasoning and text too, which the endpoint does not take.
    const input = [
      { role: 'user', content: 'Fix the build' },
      { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"cmd":"make"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ];
    const res = await post('/v1/responses/compact', {
      model,
      input,
      instructions: 'You are Codex',
      prompt_cache_key: 'session-1',
      tools: [{ type: 'function', name: 'shell', parameters: {} }],
      reasoning: { effort: 'high' },
      text: { verbosity: 'low' },
    });
    expect(res.status).toBe(200);
    const compacted = (await res.json()) as { object: string; output: { type: string }[] };
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.map((o) => o.type)).toEqual(['message', 'compaction']);
    const sent = openaiFake.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses/compact');
    expect(sent?.body).toEqual({ model, input, instructions: 'You are Codex', prompt_cache_key: 'session-1' });
    // (12 input + 7 output x 4) x 0.075 = 3.
    await expectCharged(u.userId, quotaOf(PROMPT_TOKENS, 7, 0.075, 4));

    const claudeCalls = claudeFake.requests.length;
    const refused = await post('/v1/responses/compact', { model: claudeModel, input });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: {
        message: expect.stringContaining('不支持该接口'),
        type: 'invalid_request_error',
        param: null,
        code: 'upstream_error',
      },
    });
    const missing = await post('/v1/responses/compact', { input });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { message: "Missing required parameter: 'model'." } });
    expect(claudeFake.requests.length).toBe(claudeCalls);

    // Counting input tokens: by the OpenAI channel itself, estimated for the Claude one; free.
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    const counted = await client.responses.inputTokens.count({ model, input: 'How long is this?' });
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: PROMPT_TOKENS });
    expect(openaiFake.requests.at(-1)?.path).toBe('/v1/responses/input_tokens');
    const estimated = await client.responses.inputTokens
      .count({ model: claudeModel, input: 'How long is this?' })
      .withResponse();
    expect(estimated.response.headers.get('x-aigw-estimated')).toBe('true');
    expect(estimated.data).toMatchObject({ object: 'response.input_tokens' });
    expect(estimated.data.input_tokens).toBeGreaterThan(3);
    expect(claudeFake.requests.length).toBe(claudeCalls);
    // The compaction's consumption log; the refusal is an error log at no charge (counts make none).
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length >= 2,
      10_000,
    );
    expect(logs.items.map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, quotaOf(PROMPT_TOKENS, 7, 0.075, 4)],
      [5, 0],
    ]);
  });
});

describe('channel affinity', () => {
  it('when chat requests carry one prompt_cache_key, then they stay on the channel that served it first, even one the weights never pick, and move when it is disabled', async () => {
    const model = modelName('gpt-4o-mini');
    const other = await startFakeProvider({
      kind: 'openai',
      key: 'up-openai',
      reply: REPLY,
      promptTokens: PROMPT_TOKENS,
    });
    try {
      const u = await userWithToken(s);
      // Weight 0 next to weight 3 is never picked by the weights alone.
      const kept = await createChannel(s, {
        type: 1,
        baseUrl: openaiFake.url,
        key: 'up-openai',
        models: model,
        weight: 0,
      });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const ask = (key: string) =>
        client.chat.completions.create({ model, prompt_cache_key: key, messages: [{ role: 'user', content: 'hi' }] });
      const served = () => ({ kept: openaiFake.requests.length, other: other.requests.length });
      const metric = async (result: string) => {
        const text = await fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`).then((r) => r.text());
        return Number(new RegExp(`relay_channel_affinity_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
      };
      const hitsBefore = await metric('hit');

      await ask('session-a'); // the only channel: the session is kept there
      await createChannel(s, { type: 1, baseUrl: other.url, key: 'up-openai', models: model, weight: 3 });
      // New sessions land on the new channel once the relay has it.
      let probe = 0;
      await eventually(
        async () => {
          const before = other.requests.length;
          await ask(`session-probe-${probe++}`);
          return other.requests.length > before;
        },
        (v) => v,
        { what: 'the second channel serving' },
      );
      const before = served();
      for (let i = 0; i < 5; i++) await ask('session-a');
      expect(served()).toEqual({ kept: before.kept + 5, other: before.other });
      expect(await metric('hit')).toBeGreaterThanOrEqual(hitsBefore + 5);

      // Disabled, the kept channel is passed over; the session moves and stays on the new one.
      await s.channels.updateChannelStatus({ id: kept, status: 2, reason: '' });
      await eventually(
        async () => {
          const n = other.requests.length;
          await ask('session-a');
          return other.requests.length > n;
        },
        (v) => v,
        { what: 'the session moved off the disabled channel' },
      );
      await s.channels.updateChannelStatus({ id: kept, status: 1, reason: '' });
      const moved = served();
      for (let i = 0; i < 3; i++) await ask('session-a');
      expect(served()).toEqual({ kept: moved.kept, other: moved.other + 3 });
    } finally {
      await other.close();
    }
  });
});
