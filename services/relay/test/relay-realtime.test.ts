/**
 * `/v1/realtime` over a real WebSocket (the `ws` package, as OpenAI's Node clients use it): a
 * client speaking the Realtime protocol to the relay, which opens the upstream socket on an
 * OpenAI or Azure channel (fakes speaking the protocol), passes events both ways and bills each
 * `response.done` at the text, cached and audio ratios; the wallet and the log rows (ws flag,
 * audio split) are checked.
 */
import { eventually } from '@aigw/testkit';
import {
  Api,
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeRealtime, startFakeRealtime } from './fakes/fake-realtime.ts';

let s: RelayStack;
let fake: FakeRealtime;
const REPLY = 'Realtime hello to you';

beforeAll(async () => {
  s = await startRelayStack();
  fake = await startFakeRealtime({ key: 'up-realtime', reply: REPLY });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

type Event = { type: string; [k: string]: unknown };

/** A Realtime client: every event kept, `next(type)` waits for the next of that type. */
function connect(url: string, opts: { protocols?: string[]; headers?: Record<string, string> }) {
  const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers });
  const events: Event[] = [];
  let read = 0;
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    events.push(JSON.parse(String(data)) as Event);
    for (const w of waiters.splice(0)) w();
  });
  const next = async (type: string, timeoutMs = 10_000): Promise<Event> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = events.findIndex((e, k) => k >= read && e.type === type);
      if (i >= 0) {
        read = i + 1;
        return events[i] as Event;
      }
      if (Date.now() > deadline) throw new Error(`no ${type} event; got ${events.map((e) => e.type).join(', ')}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const send = (e: Record<string, unknown>) => ws.send(JSON.stringify(e));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  return { ws, events, next, opened, send, closed };
}

/** The HTTP status and body of a refused handshake. */
function refused(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => reject(new Error('handshake accepted')));
    ws.once('unexpected-response', (_req, res) => {
      let raw = '';
      res.on('data', (c: Buffer) => {
        raw += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: raw ? JSON.parse(raw) : undefined }));
    });
    ws.once('error', () => {});
  });
}

/** What a response costs: gpt-4o-realtime ratios 2.5, completion 4, audio 8, audio completion 2, cache 0.5. */
function quotaOf(u: {
  inputText: number;
  inputAudio: number;
  cachedText: number;
  outputText: number;
  outputAudio: number;
}) {
  const prompt = u.inputText - u.cachedText + u.cachedText * 0.5 + u.inputAudio * 8;
  const completion = u.outputText * 4 + u.outputAudio * 8 * 2;
  return Math.max(1, Math.round((prompt + completion) * 2.5));
}

async function wallet(userId: number) {
  const w = (await s.wallet.getWallet({ userId })).wallet;
  return { quota: w?.quota ?? 0, used: w?.usedQuota ?? 0 };
}

describe('/v1/realtime', () => {
  it('when a browser-style client (key in the subprotocol) talks to an OpenAI channel, then events pass both ways and each response.done is billed and logged with the ws flag', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const u = await userWithToken(s);
    const channelId = await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const before = await wallet(u.userId);

    const audioTurn = { inputText: 100, inputAudio: 50, cachedText: 40, outputText: 20, outputAudio: 60 };
    const textTurn = { inputText: 30, inputAudio: 0, cachedText: 0, outputText: 10, outputAudio: 0 };
    fake.setUsage([audioTurn, textTurn]);
    const wsUrl = `${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`;
    const c = connect(wsUrl, {
      protocols: ['realtime', `openai-insecure-api-key.${u.key}`, 'openai-beta.realtime-v1'],
    });
    await c.opened;
    expect(c.ws.protocol).toBe('realtime');
    const created = await c.next('session.created');
    expect((created.session as { model: string }).model).toBe(model);

    c.send({
      type: 'session.update',
      session: { type: 'realtime', instructions: 'Be brief', output_modalities: ['audio'] },
    });
    const updated = await c.next('session.updated');
    expect((updated.session as { instructions: string }).instructions).toBe('Be brief');
    // A prompt event whose item is not an object: an error event (never sent upstream: see below).
    c.send({ type: 'conversation.item.create', event_id: 'evt_bad', item: 'hello' });
    expect((await c.next('error')).error).toEqual({
      type: 'invalid_request_error',
      code: 'invalid_field',
      message: '字段 item 的类型无效，应为 object',
      param: null,
      event_id: 'evt_bad',
    });
    c.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(3200).toString('base64') });
    c.send({ type: 'input_audio_buffer.commit' });
    await c.next('input_audio_buffer.committed');
    c.send({ type: 'response.create' });
    const done = await c.next('response.done');
    expect((done.response as { status: string }).status).toBe('completed');
    const transcript = c.events
      .filter((e) => e.type === 'response.output_audio_transcript.delta')
      .map((e) => e.delta)
      .join('');
    expect(transcript).toBe(REPLY);
    expect(c.events.filter((e) => e.type === 'response.output_audio.delta')).toHaveLength(4);

    c.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And in text?' }] },
    });
    await c.next('conversation.item.created');
    c.send({ type: 'response.create', response: { output_modalities: ['text'] } });
    await c.next('response.done');
    const text = c.events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe(REPLY);

    // The upstream got the channel's key (not the client's), the beta flag, and the client's events as sent.
    const hs = fake.handshakes.at(-1);
    expect(hs?.path).toBe(`/v1/realtime?model=${model}`);
    expect(hs?.headers.authorization).toBe('Bearer up-realtime');
    expect(hs?.headers['openai-beta']).toBe('realtime=v1');
    expect(fake.events.slice(-6).map((e) => e.type)).toEqual([
      'session.update',
      'input_audio_buffer.append',
      'input_audio_buffer.commit',
      'response.create',
      'conversation.item.create',
      'response.create',
    ]);

    c.ws.close(1000, 'bye');
    expect(await c.closed).toBe(1000);
    await eventually(
      async () => fake.open(),
      (n) => n === 0,
      5_000,
    );
    expect(fake.open()).toBe(0);

    const charged = quotaOf(audioTurn) + quotaOf(textTurn);
    expect(quotaOf(audioTurn)).toBe(3800);
    expect(quotaOf(textTurn)).toBe(175);
    const after = await eventually(
      () => wallet(u.userId),
      (w) => w.used >= before.used + charged && w.quota === before.quota - charged,
    );
    expect(after.used - before.used).toBe(charged);
    // Whatever was reserved for the session came back: only the two responses are paid.
    expect(before.quota - after.quota).toBe(charged);

    const logs = await eventually(
      () =>
        s.logs.queryLogs({ filter: { userId: u.userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length >= 2,
    );
    expect(logs.items).toHaveLength(2);
    const rows = logs.items.map((l) => ({ ...l, extra: JSON.parse(l.other || '{}') }));
    const audioRow = rows.find((r) => r.quota === 3800);
    const textRow = rows.find((r) => r.quota === 175);
    expect(audioRow).toMatchObject({ channel: channelId, promptTokens: 150, completionTokens: 80, isStream: true });
    expect(audioRow?.extra).toMatchObject({
      ws: true,
      audio: true,
      audio_input: 50,
      audio_output: 60,
      text_input: 100,
      text_output: 20,
      audio_ratio: 8,
      audio_completion_ratio: 2,
      model_ratio: 2.5,
      completion_ratio: 4,
      cache_tokens: 40,
    });
    expect(textRow).toMatchObject({ promptTokens: 30, completionTokens: 10, isStream: true });
    expect(textRow?.extra.ws).toBe(true);
    expect(textRow?.extra.audio).toBeUndefined();
  });

  it('when a small wallet runs a session, then each response is held before it is billed and the one the wallet cannot cover ends the session: the wallet keeps its reservation, charges = logs', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const turn = { inputText: 100, inputAudio: 50, cachedText: 40, outputText: 20, outputAudio: 60 };
    const cost = quotaOf(turn);
    // The session's reservation: PreConsumedQuota (500) tokens at the dearest prompt kind (audio, 8) x 2.5.
    const reserve = 500 * 8 * 2.5;
    // Room for the reservation, two responses and a bit: the third response is not covered.
    const quota = reserve + 2 * cost + 1000;
    const u = await userWithToken(s, { quota });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    fake.setUsage([turn]);
    const c = connect(`${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`, {
      headers: { authorization: `Bearer ${u.key}` },
    });
    await c.opened;
    await c.next('session.created');
    for (let i = 0; i < 3; i++) {
      c.send({ type: 'response.create', response: { output_modalities: ['text'] } });
      await c.next('response.done');
    }
    const refusal = await c.next('error');
    expect(refusal.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_user_quota' });
    expect(await c.closed).toBe(1008);

    const charged = 3 * cost;
    const after = await eventually(
      () => wallet(u.userId),
      (w) => w.used === charged && w.quota === quota - charged,
    );
    expect(after).toEqual({ quota: quota - charged, used: charged });
    expect(after.quota).toBeGreaterThanOrEqual(0);
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length >= 3,
    );
    expect(logs.items.map((l) => l.quota)).toEqual([cost, cost, cost]);
  });

  it('when a server-side client (Authorization header) talks to an Azure channel, then the deployment URL and api-key are used and the response is billed', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const u = await userWithToken(s);
    await createChannel(s, {
      type: 3,
      baseUrl: fake.url,
      key: 'up-realtime',
      models: model,
      other: '2025-04-01-preview',
    });
    await routable(s.stack.relayUrl, u.key, model);
    const turn = { inputText: 12, inputAudio: 0, cachedText: 0, outputText: 4, outputAudio: 0 };
    fake.setUsage([turn]);
    const c = connect(`${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`, {
      headers: { authorization: `Bearer ${u.key}` },
    });
    await c.opened;
    await c.next('session.created');
    c.send({ type: 'response.create', response: { output_modalities: ['text'] } });
    await c.next('response.done');
    const hs = fake.handshakes.at(-1);
    expect(hs?.path).toBe(`/openai/realtime?api-version=2025-04-01-preview&deployment=${model}`);
    expect(hs?.headers['api-key']).toBe('up-realtime');
    expect(hs?.headers.authorization).toBeUndefined();
    c.ws.close();
    await c.closed;
    const used = await eventually(
      async () => (await wallet(u.userId)).used,
      (v) => v > 0,
    );
    expect(used).toBe(quotaOf(turn));
  });

  it('when sensitive-word checks are on, then a prompt event holding a listed word is answered with an error event and never reaches the upstream', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    await setOption(s, 'SensitiveWords', 'contraband');
    await setOption(s, 'CheckSensitiveOnPromptEnabled', 'true');
    await setOption(s, 'CheckSensitiveEnabled', 'true');
    try {
      const c = connect(`${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`, {
        headers: { authorization: `Bearer ${u.key}` },
      });
      await c.opened;
      await c.next('session.created');
      const item = (text: string, id: string) => ({
        type: 'conversation.item.create',
        event_id: id,
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      });
      /** The first event after index `from` that passes `test` (every item gets an answer). */
      const seen = (from: number, test: (e: Event) => boolean) =>
        eventually(
          () => c.events.slice(from).find(test),
          (e) => e !== undefined,
          { timeoutMs: 10_000, intervalMs: 50, what: 'the answer to the event sent' },
        );
      // The relay hears the options over Kafka: retry until the check applies.
      let n = 0;
      const err = await eventually(
        async () => {
          const from = c.events.length;
          c.send(item('where is the CONTRABAND', `evt_${++n}`));
          const e = await seen(from, (x) => x.type === 'error' || x.type === 'conversation.item.created');
          return e?.type === 'error' ? e : undefined;
        },
        (e) => e !== undefined,
      );
      expect(err?.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'sensitive_words_detected',
        message: '请求内容包含敏感词：contraband',
        event_id: `evt_${n}`,
      });
      // Only the attempts made before the relay heard the options went upstream.
      const upstreamSaw = fake.events.filter((e) => JSON.stringify(e).includes('CONTRABAND')).length;
      expect(upstreamSaw).toBe(n - 1);
      let from = c.events.length;
      c.send({ type: 'session.update', session: { instructions: 'talk about contraband' } });
      const upd = await seen(from, (x) => x.type === 'error' || x.type === 'session.updated');
      expect(upd?.error).toMatchObject({ code: 'sensitive_words_detected' });
      from = c.events.length;
      c.send(item('a clean question', 'evt_clean'));
      expect((await seen(from, (x) => x.type === 'error' || x.type === 'conversation.item.created'))?.type).toBe(
        'conversation.item.created',
      );
      c.ws.close();
      await c.closed;
    } finally {
      await setOption(s, 'CheckSensitiveEnabled', 'false');
    }
  });

  it("when a token's concurrency limit is 1, then a second session is refused with a 429 while the first is open and admitted once it closed", async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const u = await userWithToken(s, { token: { concurrencyLimit: 1 } });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const wsUrl = `${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`;
    const first = connect(wsUrl, { headers: { authorization: `Bearer ${u.key}` } });
    await first.opened;
    await first.next('session.created');

    const second = await refused(wsUrl, { authorization: `Bearer ${u.key}` });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ error: { message: '令牌并发请求数超过限制（最多 1 个），请稍后再试' } });

    first.ws.close(1000, 'bye');
    await first.closed;
    // The slot is given back when the session ends: the next session is admitted.
    const third = await eventually(
      async () => {
        const c = connect(wsUrl, { headers: { authorization: `Bearer ${u.key}` } });
        const ok = await c.opened.then(
          () => true,
          () => false,
        );
        return { c, ok };
      },
      (r) => r.ok,
      { what: 'a session admitted after the first closed' },
    );
    await third.c.next('session.created');
    third.c.ws.close(1000, 'bye');
    await third.c.closed;
  });

  it('when the key is wrong, no channel serves the model or the upstream refuses the channel key, then the handshake is refused in OpenAI error shape and nothing is billed', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const u = await userWithToken(s);
    const base = `${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime`;
    const bad = await refused(`${base}?model=${model}`, { authorization: 'Bearer sk-nope' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ error: { message: '无效的令牌', type: 'authentication_error' } });

    const none = await refused(`${base}?model=${model}`, { authorization: `Bearer ${u.key}` });
    expect(none.status).toBe(503);
    expect((none.body as { error: { message: string } }).error.message).toContain(model);

    const noModel = await refused(base, { authorization: `Bearer ${u.key}` });
    expect(noModel.status).toBe(400);

    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'wrong-upstream-key', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const up = await refused(`${base}?model=${model}`, { authorization: `Bearer ${u.key}` });
    expect(up.status).toBe(401);
    expect((up.body as { error: { message: string } }).error.message).toBe('Incorrect API key provided');

    const other = await refused(`${s.stack.relayUrl.replace('http', 'ws')}/v1/elsewhere`, {});
    expect(other?.status).toBe(404);

    await new Promise((r) => setTimeout(r, 500));
    const w = await wallet(u.userId);
    expect(w.used).toBe(0);
  });
  it('when an auto token with cross_group_retry opens a session whose first auto group cannot serve it, then the next auto group serves it, priced in that group, and the log row names it; without the flag the first group refusal stands', async () => {
    const hex = modelName('g').slice(-6);
    const [ga, gb] = [`ga${hex}`, `gb${hex}`];
    // model: ga's only channel refuses the channel key; model2: ga has only a channel of a type
    // without the Realtime API. gb serves both.
    const [model, model2] = [modelName('gpt-4o-realtime-preview'), modelName('gpt-4o-realtime-preview')];
    await Promise.all([
      setOption(s, 'GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1, [ga]: 2, [gb]: 4 })),
      setOption(s, 'UserUsableGroups', '{"default":"默认分组","vip":"vip分组","auto":"自动分组"}'),
      setOption(
        s,
        'group_ratio_setting.group_special_usable_group',
        JSON.stringify({ default: { [`+:${ga}`]: 'A', [`+:${gb}`]: 'B' } }),
      ),
      setOption(s, 'AutoGroups', JSON.stringify([ga, gb])),
    ]);
    const [badId, goodId] = await Promise.all([
      createChannel(s, { type: 1, baseUrl: fake.url, key: 'wrong-upstream-key', models: model, group: ga }),
      createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: `${model},${model2}`, group: gb }),
      createChannel(s, { type: 14, baseUrl: fake.url, key: 'up-realtime', models: model2, group: ga }),
    ]);
    const [retrying, stays] = await Promise.all([
      userWithToken(s, { token: { group: 'auto', crossGroupRetry: true } }),
      userWithToken(s, { token: { group: 'auto' } }),
    ]);
    const turn = { inputText: 30, inputAudio: 0, cachedText: 0, outputText: 10, outputAudio: 0 };
    fake.setUsage([turn]);
    const wsUrl = (m: string) => `${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${m}`;
    const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    // The relay hears the groups and channels over Kafka: retry until the session opens.
    const c = await eventually(
      async () => {
        const x = connect(wsUrl(model), auth(retrying.key));
        return (await x.opened.then(() => x).catch(() => undefined)) as ReturnType<typeof connect> | undefined;
      },
      (x) => x !== undefined,
      { what: 'a session opened in the second auto group' },
    );
    if (!c) throw new Error('no session');
    await c.next('session.created');
    c.send({ type: 'response.create', response: { output_modalities: ['text'] } });
    await c.next('response.done');
    c.ws.close(1000, 'bye');
    await c.closed;
    // gb's group ratio 4 on the model's 2.5: (30 + 10 x 4) x 2.5 x 4.
    const expected = 700;
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: retrying.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length > 0,
    );
    expect(logs.items[0]).toMatchObject({ group: gb, channel: goodId, quota: expected });
    expect(JSON.parse(logs.items[0]?.other ?? '{}').admin_info.use_channel).toEqual([badId, goodId]);
    const w = await eventually(
      () => wallet(retrying.userId),
      (x) => x.used >= expected,
    );
    expect(w.used).toBe(expected);

    // No Realtime channel in ga for model2: the walk goes on to gb too.
    const c2 = connect(wsUrl(model2), auth(retrying.key));
    await c2.opened;
    await c2.next('session.created');
    c2.ws.close(1000, 'bye');
    await c2.closed;

    // Without cross_group_retry the session stays in ga and gets its upstream's refusal.
    const refusal = await refused(wsUrl(model), auth(stays.key).headers);
    expect(refusal.status).toBe(401);
    expect(refusal.body).toMatchObject({ error: { message: 'Incorrect API key provided' } });
  });

  it('when a subscription bound to the model has room, then it pays each realtime response (the wallet stays, the log row says billing_source subscription) and the session reservation comes back', async () => {
    const model = modelName('gpt-4o-realtime-preview');
    const root = new Api(s.stack.gatewayUrl);
    await root.login('root', '123456');
    const created = await root.post<{ id: number }>('/subscription/admin/plans', {
      plan: { title: 'Realtime', price_amount: 2, duration_unit: 'month', daily_quota: 50_000, models: [model] },
    });
    expect(created.body.success).toBe(true);
    const u = await userWithToken(s, { quota: 5_000_000 });
    const user = new Api(s.stack.gatewayUrl);
    await user.login(u.username, 'password123');
    const bought = await user.post('/subscription/balance/pay', {
      plan_id: created.body.data?.id,
      request_id: `rt-${u.userId}`,
    });
    expect(bought.body.success).toBe(true);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-realtime', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const before = await wallet(u.userId);
    expect(before.quota).toBe(4_000_000);

    const turn = { inputText: 30, inputAudio: 0, cachedText: 0, outputText: 10, outputAudio: 0 };
    fake.setUsage([turn]);
    const c = connect(`${s.stack.relayUrl.replace('http', 'ws')}/v1/realtime?model=${model}`, {
      headers: { authorization: `Bearer ${u.key}` },
    });
    await c.opened;
    await c.next('session.created');
    for (let i = 0; i < 2; i++) {
      c.send({ type: 'response.create', response: { output_modalities: ['text'] } });
      await c.next('response.done');
    }
    c.ws.close(1000, 'bye');
    await c.closed;

    const cost = quotaOf(turn);
    const logs = await eventually(
      () =>
        s.logs.queryLogs({ filter: { userId: u.userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length >= 2,
    );
    expect(logs.items.map((l) => [l.quota, JSON.parse(l.other).billing_source])).toEqual([
      [cost, 'subscription'],
      [cost, 'subscription'],
    ]);
    type Mine = { subscriptions: { subscription: { windows: { used: number }[] } }[] };
    // The session's reservation (held on the subscription too) is given back: the window counts the two responses.
    const mine = await eventually(
      async () => (await user.get<Mine>('/subscription/self')).body.data as Mine,
      (m) => m.subscriptions[0]?.subscription.windows[0]?.used === 2 * cost,
      { what: 'the daily window at the two responses' },
    );
    expect(mine.subscriptions[0]?.subscription.windows[0]?.used).toBe(2 * cost);
    expect((await wallet(u.userId)).quota).toBe(4_000_000);
  });
});
