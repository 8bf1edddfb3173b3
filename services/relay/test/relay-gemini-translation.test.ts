/**
 * Google's `@google/genai` SDK against the relay, on channels that speak OpenAI's and Claude's
 * formats (fakes recording what they received): tool parameters given as JSON Schema
 * (`parametersJsonSchema`) or as Gemini's upper-case OpenAPI schema reach the upstream as JSON
 * Schema, `toolConfig.functionCallingConfig` becomes the upstream's tool choice, and JSON output
 * (`responseMimeType` with `responseSchema` or `responseJsonSchema`) becomes OpenAI's
 * response_format or, for Claude, an instruction in the system prompt. A schema spelled
 * `parameters_json_schema` (google-genai 3.6) keeps its parameters. Reasoning: genai's thinkingConfig
 * becomes Claude's thinking (the fake checks it as Anthropic does) and thinking comes back as thought
 * parts; a chat client's `-thinking-<budget>` model on a Gemini channel becomes thinkingConfig
 * (the fake checks it as Gemini does) and the thoughts come back as reasoning_content.
 */
import { eventually } from '@aigw/testkit';
import { FAKE_GEMINI_THOUGHT, FAKE_THINKING, type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let openaiFake: FakeProvider;
let claudeFake: FakeProvider;
let geminiFake: FakeProvider;
let ai: GoogleGenAI;
let key: string;
let userId: number;
let gptModel: string;
let claudeModel: string;
const JSON_REPLY = '{"city":"Paris","population":2100000}';

beforeAll(async () => {
  s = await startRelayStack();
  openaiFake = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: JSON_REPLY });
  claudeFake = await startFakeProvider({ kind: 'anthropic', key: 'up-claude', reply: JSON_REPLY });
  geminiFake = await startFakeProvider({ kind: 'gemini', key: 'up-gemini', reply: JSON_REPLY, promptTokens: 9 });
  const u = await userWithToken(s);
  key = u.key;
  userId = u.userId;
  gptModel = modelName('gpt-4o-mini');
  claudeModel = modelName('claude-3-5-sonnet');
  await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: gptModel });
  await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: claudeModel });
  await routable(s.stack.relayUrl, u.key, gptModel);
  await routable(s.stack.relayUrl, u.key, claudeModel);
  ai = new GoogleGenAI({ apiKey: u.key, httpOptions: { baseUrl: s.stack.relayUrl } });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([openaiFake?.close(), claudeFake?.close(), geminiFake?.close()]);
});

/** A tool in JSON Schema, as `parametersJsonSchema` carries it. */
const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: ['integer', 'null'], minimum: 1 },
  },
  required: ['city'],
  additionalProperties: false,
};
const weather = { name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: WEATHER_SCHEMA };
/** A tool in Gemini's own schema (upper-case types, nullable). */
const time = {
  name: 'get_time',
  description: 'Local time',
  parameters: {
    type: Type.OBJECT,
    properties: {
      zone: { type: Type.STRING, description: 'IANA zone', nullable: true },
      formats: { type: Type.ARRAY, items: { type: Type.STRING } },
    },
    required: ['formats'],
    propertyOrdering: ['zone', 'formats'],
  },
};
/** What `time`'s parameters must become upstream. */
const TIME_JSON_SCHEMA = {
  type: 'object',
  properties: {
    zone: { type: ['string', 'null'], description: 'IANA zone' },
    formats: { type: 'array', items: { type: 'string' } },
  },
  required: ['formats'],
};

const sent = (fake: FakeProvider) => fake.requests.at(-1)?.body as Record<string, unknown>;

describe('Gemini-format requests translated to OpenAI and Claude', () => {
  it('when genai offers tools and forces one on an OpenAI channel, then the schemas arrive as JSON Schema, tool_choice names the tool and the call comes back', async () => {
    openaiFake.set({ toolCall: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } });
    try {
      const res = await ai.models.generateContent({
        model: gptModel,
        contents: 'Weather in Paris?',
        config: {
          tools: [{ functionDeclarations: [weather, time] }],
          toolConfig: {
            functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] },
          },
        },
      });
      expect(res.functionCalls).toEqual([
        expect.objectContaining({ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }),
      ]);
      const body = sent(openaiFake);
      // ANY with one allowed name: that function is forced, and only it is offered.
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
      expect(body.tools).toEqual([
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA },
        },
      ]);

      await ai.models.generateContent({
        model: gptModel,
        contents: 'Time?',
        config: {
          tools: [{ functionDeclarations: [weather, time] }],
          toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
        },
      });
      const auto = sent(openaiFake);
      expect(auto.tool_choice).toBe('auto');
      expect((auto.tools as { function: { name: string; parameters: unknown } }[]).map((t) => t.function)).toEqual([
        { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA },
        { name: 'get_time', description: 'Local time', parameters: TIME_JSON_SCHEMA },
      ]);

      await ai.models.generateContent({
        model: gptModel,
        contents: 'Just talk',
        config: {
          tools: [{ functionDeclarations: [weather, time] }],
          toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } },
        },
      });
      expect(sent(openaiFake).tool_choice).toBe('none');
    } finally {
      openaiFake.set({ toolCall: undefined });
    }
  });

  it('when genai asks an OpenAI channel for JSON with responseSchema or responseJsonSchema, then response_format carries the JSON Schema and the JSON comes back', async () => {
    const res = await ai.models.generateContent({
      model: gptModel,
      contents: 'Biggest city of France as JSON',
      config: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: Type.OBJECT,
          properties: { city: { type: Type.STRING }, population: { type: Type.INTEGER } },
          required: ['city'],
        },
      },
    });
    expect(JSON.parse(res.text ?? '')).toEqual({ city: 'Paris', population: 2100000 });
    expect(sent(openaiFake).response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: {
          type: 'object',
          properties: { city: { type: 'string' }, population: { type: 'integer' } },
          required: ['city'],
        },
      },
    });

    const stream = await ai.models.generateContentStream({
      model: gptModel,
      contents: 'Same, streamed',
      config: { responseMimeType: 'application/json', responseJsonSchema: WEATHER_SCHEMA },
    });
    let text = '';
    for await (const c of stream) text += c.text ?? '';
    expect(JSON.parse(text)).toEqual({ city: 'Paris', population: 2100000 });
    expect(sent(openaiFake).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: WEATHER_SCHEMA },
    });

    await ai.models.generateContent({
      model: gptModel,
      contents: 'Any JSON',
      config: { responseMimeType: 'application/json' },
    });
    expect(sent(openaiFake).response_format).toEqual({ type: 'json_object' });
  });

  it('when genai offers tools, forces them and asks for JSON on a Claude channel, then input_schema, tool_choice and the system instruction follow', async () => {
    claudeFake.set({ toolCall: { name: 'get_time', arguments: { formats: ['iso'] } } });
    try {
      const res = await ai.models.generateContent({
        model: claudeModel,
        contents: 'What time is it?',
        config: {
          tools: [{ functionDeclarations: [weather, time] }],
          toolConfig: {
            functionCallingConfig: {
              mode: FunctionCallingConfigMode.ANY,
              allowedFunctionNames: ['get_time', 'get_weather'],
            },
          },
        },
      });
      expect(res.functionCalls?.[0]).toMatchObject({ name: 'get_time', args: { formats: ['iso'] } });
      const body = sent(claudeFake);
      expect(body.tool_choice).toEqual({ type: 'any' });
      expect(body.tools).toEqual([
        { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_SCHEMA },
        { name: 'get_time', description: 'Local time', input_schema: TIME_JSON_SCHEMA },
      ]);

      await ai.models.generateContent({
        model: claudeModel,
        contents: 'Weather?',
        config: {
          tools: [{ functionDeclarations: [weather, time] }],
          toolConfig: {
            functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] },
          },
        },
      });
      const forced = sent(claudeFake);
      expect(forced.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
      expect((forced.tools as { name: string }[]).map((t) => t.name)).toEqual(['get_weather']);
    } finally {
      claudeFake.set({ toolCall: undefined });
    }

    const res = await ai.models.generateContent({
      model: claudeModel,
      contents: 'Biggest city of France as JSON',
      config: {
        systemInstruction: 'You are terse.',
        responseMimeType: 'application/json',
        responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } },
      },
    });
    expect(JSON.parse(res.text ?? '')).toEqual({ city: 'Paris', population: 2100000 });
    const system = String(sent(claudeFake).system);
    expect(system.startsWith('You are terse.\n')).toBe(true);
    expect(system).toContain('{"type":"object","properties":{"city":{"type":"string"}}}');
  });
});

describe('schemas in every spelling, and reasoning', () => {
  it('when a Gemini request spells the schema parameters_json_schema, then the OpenAI channel gets the full parameters', async () => {
    const res = await fetch(`${s.stack.relayUrl}/v1beta/models/${gptModel}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters_json_schema: WEATHER_SCHEMA }] }],
      }),
    });
    expect(res.status).toBe(200);
    expect(sent(openaiFake).tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } },
    ]);
  });

  it('when genai asks a Claude channel to think with a budget, then Claude gets that budget and the thinking comes back as a thought part', async () => {
    const res = await ai.models.generateContent({
      model: claudeModel,
      contents: 'Think first',
      config: { maxOutputTokens: 8000, thinkingConfig: { thinkingBudget: 3000, includeThoughts: true } },
    });
    expect(sent(claudeFake)).toMatchObject({ max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 3000 } });
    const parts = res.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toMatchObject({ text: FAKE_THINKING, thought: true });
    // genai's text leaves thoughts out.
    expect(res.text).toBe(JSON_REPLY);
  });

  it('when a chat client asks a Gemini channel for a -thinking-<budget> model, then the suffix becomes thinkingConfig and the thoughts come back as reasoning_content, billed as output', async () => {
    const base = modelName('gemini-2.5-flash');
    const model = `${base}-thinking-2048`;
    await createChannel(s, { type: 24, baseUrl: geminiFake.url, key: 'up-gemini', models: model });
    await routable(s.stack.relayUrl, key, model);
    const client = new OpenAI({ apiKey: key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    const req = geminiFake.requests.at(-1);
    expect(req?.path).toContain(`/models/${base}:generateContent`);
    expect((req?.body as { generationConfig?: unknown }).generationConfig).toEqual({
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    const msg = whole.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    expect(msg.reasoning_content).toBe(FAKE_GEMINI_THOUGHT);
    expect(msg.content).toBe(JSON_REPLY);
    // One word of answer and three thought tokens.
    expect(whole.usage?.completion_tokens).toBe(4);

    const stream = await client.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let reasoning = '';
    for await (const c of stream)
      reasoning += String((c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '');
    expect(reasoning).toBe(FAKE_GEMINI_THOUGHT);
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length >= 2,
    );
    expect(logs.items.map((l) => l.completionTokens)).toEqual([4, 4]);
  });
});
