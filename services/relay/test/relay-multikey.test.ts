/**
 * Multi-key channels on the running stack: one channel holding three keys, used in turn; the
 * provider rejects one key with 401. Every request still succeeds (the relay retries the same
 * channel with a sibling key), the bad key alone is disabled by the channels service (the channel
 * stays enabled and says which line), and later requests use only the two good keys.
 */
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let fake: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  fake = await startFakeProvider({
    kind: 'openai',
    keys: ['key-good-1', 'key-good-2'],
    promptTokens: 10,
    reply: 'multi key works',
  });
  await setOption(s, 'AutomaticDisableChannelEnabled', 'true');
  await setOption(s, 'RetryTimes', '0');
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

const keysSent = () =>
  fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => String(r.headers.authorization).slice(7));

describe('multi-key channels', () => {
  it('when one of three keys answers 401, then requests keep succeeding, that key alone is disabled and the others serve', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const { ids } = await s.channels.createChannels({
      channel: {
        name: 'three keys',
        type: 1,
        key: 'key-good-1\nkey-bad\nkey-good-2',
        baseUrl: fake.url,
        models: model,
        group: 'default',
        autoBan: 1,
        status: 1,
        multiKeyMode: 'polling',
      },
    });
    const id = ids[0] ?? 0;
    const created = await s.channels.getChannel({ id });
    expect(created.channel?.multiKeyMode).toBe('polling');
    expect(JSON.parse(created.channel?.multiKeyStatus ?? '{}')).toEqual({ size: 3, disabled: [] });
    await routable(s.stack.relayUrl, u.key, model);

    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    for (let i = 0; i < 6; i++) {
      const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `hi ${i}` }] });
      expect(res.choices[0]?.message.content).toBe('multi key works');
    }
    // In turn: good-1, bad (401, then good-2 serves the same request), ...
    const early = keysSent();
    expect(early.slice(0, 3)).toEqual(['key-good-1', 'key-bad', 'key-good-2']);
    expect(early.filter((k) => k === 'key-bad').length).toBe(1);

    const ch = await eventually(
      () => s.channels.getChannel({ id }),
      (r) => JSON.parse(r.channel?.multiKeyStatus || '{}').disabled?.length === 1,
    );
    expect(ch.channel?.status).toBe(1);
    const status = JSON.parse(ch.channel?.multiKeyStatus ?? '{}');
    expect(status.size).toBe(3);
    expect(status.disabled[0].index).toBe(2);
    expect(status.disabled[0].reason).toContain('Incorrect API key');

    // Six successful requests were billed: six consumption logs, the wallet charged their sum.
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 20 } }),
      (r) => r.items.length >= 6,
    );
    expect(logs.items.length).toBe(6);
    expect(logs.items.every((l) => l.channel === id && l.promptTokens === 10 && l.completionTokens === 3)).toBe(true);
    const charged = logs.items.reduce((sum, l) => sum + l.quota, 0);
    expect(charged).toBeGreaterThan(0);
    const wallet = await eventually(
      () => s.wallet.getWallet({ userId: u.userId }),
      (w) => (w.wallet?.usedQuota ?? 0) === charged,
    );
    expect(wallet.wallet?.usedQuota).toBe(charged);

    // After the snapshot catches up, only the two good keys are used. The marker: a channel created
    // after the key was disabled. Once the relay routes its model, the relay's snapshot was read
    // after that (snapshots are whole and load one after another), so it has the disabled key.
    const marker = modelName('marker');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'key-marker', models: marker });
    await routable(s.stack.relayUrl, u.key, marker);
    const before = keysSent().length;
    for (let i = 0; i < 4; i++)
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'again' }] });
    const later = keysSent().slice(before);
    expect(later.length).toBe(4);
    expect(new Set(later)).toEqual(new Set(['key-good-1', 'key-good-2']));
  });

  it('when every key of a channel is rejected, then the channel is auto-disabled', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const { ids } = await s.channels.createChannels({
      channel: {
        name: 'two bad keys',
        type: 1,
        key: 'nope-1\nnope-2',
        baseUrl: fake.url,
        models: model,
        group: 'default',
        autoBan: 1,
        status: 1,
        multiKeyMode: 'random',
      },
    });
    const id = ids[0] ?? 0;
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    const ch = await eventually(
      () => s.channels.getChannel({ id }),
      (r) => r.channel?.status === 3,
    );
    expect(ch.channel?.status).toBe(3);
    expect(JSON.parse(ch.channel?.otherInfo ?? '{}').status_reason).toContain('所有密钥均已禁用');
    expect(
      JSON.parse(ch.channel?.multiKeyStatus ?? '{}')
        .disabled.map((d: { index: number }) => d.index)
        .sort(),
    ).toEqual([1, 2]);
  });

  it('when an admin disables one key through multi_key/manage, then the relay stops using it and get_key_status shows it', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const { ids } = await s.channels.createChannels({
      channel: {
        name: 'managed keys',
        type: 1,
        key: 'key-good-1\nkey-good-2',
        baseUrl: fake.url,
        models: model,
        group: 'default',
        autoBan: 1,
        status: 1,
        multiKeyMode: 'polling',
      },
    });
    const id = ids[0] ?? 0;
    const done = await s.channels.manageMultiKeys({ channelId: id, action: 'disable_key', keyIndex: 0 });
    expect(done.message).toBe('密钥已禁用');
    const status = await s.channels.manageMultiKeys({ channelId: id, action: 'get_key_status' });
    expect(status.keys.map((k) => [k.index, k.status])).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(status.keys[0]?.keyPreview).not.toContain('key-good-1');
    expect([status.enabledCount, status.manualDisabledCount, status.autoDisabledCount]).toEqual([1, 1, 0]);
    // A channel created after the change: once it routes, the relay's snapshot has the disabled key.
    const marker = modelName('marker');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'key-marker', models: marker });
    await routable(s.stack.relayUrl, u.key, marker);
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const before = keysSent().length;
    for (let i = 0; i < 3; i++)
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'managed' }] });
    expect(keysSent().slice(before)).toEqual(['key-good-2', 'key-good-2', 'key-good-2']);
  });

  it('when a channel has overrides, then the upstream gets the overridden body and headers and the system prompt', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const { ids } = await s.channels.createChannels({
      channel: {
        name: 'overridden',
        type: 1,
        key: 'key-good-1',
        baseUrl: fake.url,
        models: model,
        group: 'default',
        autoBan: 1,
        status: 1,
        paramOverride: JSON.stringify({
          top_p: 0.3,
          operations: [
            { path: 'metadata.tier', mode: 'set', value: 'gold' },
            { path: 'temperature', mode: 'delete' },
            { path: 'X-Route', mode: 'set_header', value: 'blue' },
          ],
        }),
        headerOverride: JSON.stringify({ 'X-Upstream-Key': 'k={api_key}' }),
        setting: JSON.stringify({ system_prompt: 'You are terse.' }),
        settings: JSON.stringify({ disable_store: true }),
      },
    });
    expect((await s.channels.getChannel({ id: ids[0] ?? 0 })).channel?.setting).toContain('You are terse.');
    // Nothing half-saved: a bad override on update is refused and the stored one stays.
    const refused = await s.channels.updateChannel({ id: ids[0] ?? 0, headerOverride: '{"X-A": 1}' }).catch((e) => e);
    expect(String(refused.message)).toContain('X-A 的值必须是字符串');
    expect((await s.channels.getChannel({ id: ids[0] ?? 0 })).channel?.headerOverride).toContain('{api_key}');
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const res = await client.chat.completions.create({
      model,
      temperature: 0.7,
      store: true,
      messages: [{ role: 'user', content: 'override me' }],
    });
    expect(res.choices[0]?.message.content).toBe('multi key works');
    const sent = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
    const body = sent?.body as Record<string, unknown>;
    expect(body.metadata).toEqual({ tier: 'gold' });
    expect(body.top_p).toBe(0.3);
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('store');
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'override me' },
    ]);
    expect(sent?.headers['x-upstream-key']).toBe('k=key-good-1');
    expect(sent?.headers['x-route']).toBe('blue');
  });

  it('when the requests of one session (prompt_cache_key) go to a multi-key channel, then they keep the key that served the session first instead of taking the keys in turn', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await s.channels.createChannels({
      channel: {
        name: 'affinity keys',
        type: 1,
        key: 'key-good-1\nkey-good-2',
        baseUrl: fake.url,
        models: model,
        group: 'default',
        autoBan: 0,
        status: 1,
        multiKeyMode: 'polling',
      },
    });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const ask = async (session?: string) => {
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hi' }],
        ...(session ? { prompt_cache_key: session } : {}),
      });
      return keysSent().at(-1);
    };
    // Without a session the keys go in turn.
    const turns = [await ask(), await ask()];
    expect(new Set(turns).size).toBe(2);
    const first = await ask('session-keys');
    const again = [await ask('session-keys'), await ask('session-keys'), await ask('session-keys')];
    expect(again).toEqual([first, first, first]);
  });

  it('when a channel has a proxy in its setting, then its upstream calls go through that proxy', async () => {
    // A forward proxy that records what it was asked to reach (CONNECT tunnels and plain requests).
    const reached: string[] = [];
    const tunnels: { destroy(): void }[] = [];
    const proxy = createHttpServer((req, res) => {
      reached.push(String(req.url));
      const fwd = httpRequest(String(req.url), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(fwd);
    });
    proxy.on('connect', (req, socket, head) => {
      reached.push(String(req.url));
      tunnels.push(socket);
      const [host, port] = String(req.url).split(':');
      const up = netConnect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      });
      up.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const model = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      const { port } = proxy.address() as AddressInfo;
      await s.channels.createChannels({
        channel: {
          name: 'proxied',
          type: 1,
          key: 'key-good-2',
          baseUrl: fake.url,
          models: model,
          group: 'default',
          autoBan: 1,
          status: 1,
          setting: JSON.stringify({ proxy: `http://127.0.0.1:${port}` }),
        },
      });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'via proxy' }] });
      expect(res.choices[0]?.message.content).toBe('multi key works');
      expect(reached.some((t) => t.includes(new URL(fake.url).host))).toBe(true);
    } finally {
      // Tunnels are not the server's connections: the relay's pool keeps them open.
      for (const t of tunnels) t.destroy();
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('when a channel has thinking_to_content, then the reasoning reaches the client as content inside <think> tags', async () => {
    // An OpenAI-format upstream that thinks before it answers (the shared fake has no reasoning).
    const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
    const thinker = createHttpServer((req, res) => {
      let raw = '';
      req.on('data', (d) => {
        raw += d;
      });
      req.on('end', () => {
        const usage = { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 };
        if (!JSON.parse(raw).stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          const message = { role: 'assistant', content: 'Answer', reasoning_content: 'hmm' };
          res.end(
            JSON.stringify({
              id: 'c1',
              object: 'chat.completion',
              created: 1,
              model: 'm',
              choices: [{ index: 0, message, finish_reason: 'stop' }],
              usage,
            }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', reasoning_content: 'hm' }));
        res.write(chunk({ reasoning_content: 'm' }));
        res.write(chunk({ content: 'Answer' }));
        res.end(`${chunk({}, { usage })}data: [DONE]\n\n`);
      });
    });
    await new Promise<void>((r) => thinker.listen(0, '127.0.0.1', r));
    try {
      const model = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      await s.channels.createChannels({
        channel: {
          name: 'thinker',
          type: 1,
          key: 'k',
          baseUrl: `http://127.0.0.1:${(thinker.address() as AddressInfo).port}`,
          models: model,
          group: 'default',
          status: 1,
          setting: JSON.stringify({ thinking_to_content: true }),
        },
      });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'q' }],
      });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      expect(text).toBe('<think>\nhmm\n</think>\nAnswer');
      const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'q' }] });
      expect(whole.choices[0]?.message.content).toBe('<think>\nhmm\n</think>\nAnswer');
    } finally {
      thinker.closeAllConnections();
      await new Promise((r) => thinker.close(r));
    }
  });
});
