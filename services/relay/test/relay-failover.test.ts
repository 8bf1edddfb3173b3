/**
 * Retries and failover on the running stack: a 500 moves to the next channel, a 400 does not,
 * a pinned channel is never retried, a first-token timeout fails over, status codes are mapped,
 * and a 401 auto-disables the channel when AutomaticDisableChannelEnabled is on.
 */
import { OPTION_CATALOGUE } from '@aigw/common';
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
let bad: FakeProvider;
let good: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack({ RELAY_FIRST_TOKEN_TIMEOUT_MS: '1000' });
  bad = await startFakeProvider({ kind: 'openai', key: 'up-key', reply: 'from the bad one' });
  good = await startFakeProvider({ kind: 'openai', key: 'up-key', reply: 'from the good one' });
  await setOption(s, 'RetryTimes', '2');
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([bad?.close(), good?.close()]);
});

async function pair(opts: { statusCodeMapping?: string } = {}) {
  const model = modelName('gpt-4o-mini');
  const u = await userWithToken(s);
  const badId = await createChannel(s, {
    type: 1,
    baseUrl: bad.url,
    key: 'up-key',
    models: model,
    priority: 10,
    ...opts,
  });
  const goodId = await createChannel(s, { type: 1, baseUrl: good.url, key: 'up-key', models: model, priority: 0 });
  await routable(s.stack.relayUrl, u.key, model);
  return { model, u, badId, goodId };
}

const goodCalls = () => good.requests.filter((r) => r.path === '/v1/chat/completions').length;

describe('relay retries and failover', () => {
  it('when the first channel answers 500, then the second channel serves and the log lists both', async () => {
    const { model, u, badId, goodId } = await pair();
    bad.set({ status: 500, message: 'upstream exploded' });
    try {
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]?.message.content).toBe('from the good one');
      const logs = await eventually(
        () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
        (r) => r.items.length > 0,
      );
      expect(logs.items[0]?.channel).toBe(goodId);
      expect(JSON.parse(logs.items[0]?.other ?? '{}').admin_info.use_channel).toEqual([badId, goodId]);
    } finally {
      bad.set({ status: 0 });
    }
  });

  it('when the first channel answers 400, then it is not retried and the client gets 400 and is not charged', async () => {
    const { model, u } = await pair();
    bad.set({ status: 400, message: 'bad request upstream' });
    const before = goodCalls();
    try {
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.message).toContain('bad request upstream');
      expect(goodCalls()).toBe(before);
      const errors = await eventually(
        () => s.logs.queryLogs({ filter: { userId: u.userId, type: 5 }, page: { page: 1, pageSize: 5 } }),
        (r) => r.items.length > 0,
      );
      expect(errors.items[0]?.quota).toBe(0);
      const wallet = await s.wallet.getWallet({ userId: u.userId });
      expect(wallet.wallet?.usedQuota ?? 0).toBe(0);
    } finally {
      bad.set({ status: 0 });
    }
  });

  it('when the failing channel has a status code mapping, then the client gets the mapped status', async () => {
    const { model, u } = await pair({ statusCodeMapping: '{"400":"502"}' });
    bad.set({ status: 400, message: 'mapped' });
    try {
      const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe('mapped');
    } finally {
      bad.set({ status: 0 });
    }
  });

  it('when an admin pins a failing channel, then it is not retried; a common user may not pin', async () => {
    const { model, badId } = await pair();
    const admin = await userWithToken(s, { role: 10 });
    const common = await userWithToken(s);
    bad.set({ status: 500, message: 'pinned failure' });
    const before = goodCalls();
    try {
      const client = new OpenAI({ apiKey: `${admin.key}-${badId}`, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(500);
      expect(goodCalls()).toBe(before);
      const denied = await new OpenAI({
        apiKey: `${common.key}-${badId}`,
        baseURL: `${s.stack.relayUrl}/v1`,
        maxRetries: 0,
      }).chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(denied.status).toBe(403);
    } finally {
      bad.set({ status: 0 });
    }
  });

  it('when a stream’s first token is too slow, then the relay fails over to another channel', async () => {
    const { model, u } = await pair();
    bad.set({ firstChunkDelayMs: 3_000 });
    try {
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      expect(text).toBe('from the good one');
    } finally {
      bad.set({ firstChunkDelayMs: 0 });
    }
  });

  it('when AutomaticDisableChannelEnabled is on and a channel answers 401, then the channel is disabled', async () => {
    await setOption(s, 'AutomaticDisableChannelEnabled', 'true');
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const id = await createChannel(s, { type: 1, baseUrl: bad.url, key: 'wrong-key', models: model, autoBan: 1 });
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
    expect(ch.channel?.otherInfo).toContain('status_reason');
  });

  it('when AutomaticRetryStatusCodes drops 500 and adds 400, then a 500 is answered as is and a 400 fails over', async () => {
    const refused = await setOption(s, 'AutomaticRetryStatusCodes', '400,abc').catch((e) => e);
    expect(String(refused?.message)).toContain('无效的状态码规则：abc');
    const { model, u } = await pair();
    await setOption(s, 'AutomaticRetryStatusCodes', '400,429');
    const call = () =>
      fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
    try {
      bad.set({ status: 500, message: 'not retried any more' });
      // The relay follows the option within a second: until then a 500 still fails over.
      const res = await eventually(call, (r) => r.status === 500, { what: 'a 500 answered without failover' });
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe('not retried any more');
      bad.set({ status: 400, message: 'now retried' });
      const ok = await call();
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
        'from the good one',
      );
    } finally {
      bad.set({ status: 0 });
      await setOption(s, 'AutomaticRetryStatusCodes', OPTION_CATALOGUE.AutomaticRetryStatusCodes.default);
    }
  });

  it('when an upstream error holds one of AutomaticDisableKeywords, then the channel is disabled', async () => {
    await setOption(s, 'AutomaticDisableChannelEnabled', 'true');
    await setOption(s, 'AutomaticDisableKeywords', 'Model Is Retired');
    const { model, u, badId } = await pair();
    bad.set({ status: 404, message: 'This model is retired for your organization' });
    try {
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      // Each request fails over to the good channel (a 404 may come back as is until the relay has
      // the default retry codes back: the case before changed them); once the relay has the
      // keyword, the failure it reports disables the bad channel.
      const ch = await eventually(
        async () => {
          await client.chat.completions
            .create({ model, messages: [{ role: 'user', content: 'hi' }] })
            .catch(() => undefined);
          return s.channels.getChannel({ id: badId });
        },
        (r) => r.channel?.status === 3,
        { what: 'the channel disabled by a keyword' },
      );
      expect(JSON.parse(ch.channel?.otherInfo ?? '{}').status_reason).toContain('retired');
      const res = await eventually(
        () =>
          client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined),
        (r) => r !== undefined,
        { what: 'the model served once the bad channel is out' },
      );
      expect(res?.choices[0]?.message.content).toBe('from the good one');
    } finally {
      bad.set({ status: 0 });
      await setOption(s, 'AutomaticDisableKeywords', OPTION_CATALOGUE.AutomaticDisableKeywords.default);
    }
  });

  it('when an auto token asks for a model only its second auto group serves, then that group is used and priced by GroupGroupRatio, and the log row names it', async () => {
    const hex = modelName('g').slice(-6);
    const [ga, gb] = [`ga${hex}`, `gb${hex}`];
    const model = modelName('gpt-4o-mini');
    const model2 = modelName('gpt-4o-mini');
    await Promise.all([
      setOption(s, 'GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1, [ga]: 2, [gb]: 4 })),
      setOption(s, 'UserUsableGroups', '{"default":"默认分组","vip":"vip分组","auto":"自动分组"}'),
      // Users of group default may also pick ga and gb; they pay half in gb.
      setOption(
        s,
        'group_ratio_setting.group_special_usable_group',
        JSON.stringify({ default: { [`+:${ga}`]: 'A', [`+:${gb}`]: 'B' } }),
      ),
      setOption(s, 'AutoGroups', JSON.stringify([ga, gb])),
      setOption(s, 'GroupGroupRatio', JSON.stringify({ default: { [gb]: 0.5 } })),
    ]);
    // model: only gb serves it; model2: ga's only channel (the bad one) and gb.
    const [, badId, goodId] = await Promise.all([
      createChannel(s, { type: 1, baseUrl: good.url, key: 'up-key', models: model, group: gb }),
      createChannel(s, { type: 1, baseUrl: bad.url, key: 'up-key', models: model2, group: ga }),
      createChannel(s, { type: 1, baseUrl: good.url, key: 'up-key', models: model2, group: gb }),
    ]);
    const [u, retrying, vip] = await Promise.all([
      userWithToken(s, { token: { group: 'auto' } }),
      userWithToken(s, { token: { group: 'auto', crossGroupRetry: true } }),
      // A vip user has no special usable groups: gb is not theirs to use.
      userWithToken(s, { group: 'vip', token: { group: gb } }),
    ]);
    await routable(s.stack.relayUrl, u.key, model);
    await routable(s.stack.relayUrl, u.key, model2);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const res = await eventually(
      () => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e),
      (r) => !(r instanceof Error),
      { what: 'the auto token served' },
    );
    expect(res.choices[0]?.message.content).toBe('from the good one');
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length > 0,
    );
    const row = logs.items[0];
    expect(row?.group).toBe(gb);
    const m = /模型倍率 ([\d.]+)，补全倍率 ([\d.]+)，分组倍率 ([\d.]+)/.exec(row?.content ?? '');
    expect(m?.[3]).toBe('0.5');
    const [mr, cr] = [Number(m?.[1]), Number(m?.[2])];
    const expected = Math.max(1, Math.round(((row?.promptTokens ?? 0) + (row?.completionTokens ?? 0) * cr) * mr * 0.5));
    expect(row?.quota).toBe(expected);
    const used = await eventually(
      async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0,
      (v) => v >= expected,
    );
    expect(used).toBe(expected);
    const denied = await new OpenAI({
      apiKey: vip.key,
      baseURL: `${s.stack.relayUrl}/v1`,
      maxRetries: 0,
    }).chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(denied.status).toBe(403);
    expect(denied.message).toContain(`无权访问 ${gb} 分组`);

    // Cross-group retry: ga's only channel answers 500 for model2; a token with cross_group_retry
    // goes on in gb, one without answers the 500 (retries stay in ga, which has no other channel).
    bad.set({ status: 500, message: 'ga is down' });
    const before = goodCalls();
    try {
      const stays = await client.chat.completions
        .create({ model: model2, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(stays.status).toBe(500);
      expect(goodCalls()).toBe(before);
      const across = await new OpenAI({
        apiKey: retrying.key,
        baseURL: `${s.stack.relayUrl}/v1`,
        maxRetries: 0,
      }).chat.completions.create({ model: model2, messages: [{ role: 'user', content: 'hi' }] });
      expect(across.choices[0]?.message.content).toBe('from the good one');
      const crossed = await eventually(
        () => s.logs.queryLogs({ filter: { userId: retrying.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
        (r) => r.items.length > 0,
      );
      expect(crossed.items[0]).toMatchObject({ group: gb, channel: goodId });
      expect(crossed.items[0]?.content).toContain('分组倍率 0.5');
      expect(JSON.parse(crossed.items[0]?.other ?? '{}').admin_info.use_channel).toEqual([badId, goodId]);
    } finally {
      bad.set({ status: 0 });
    }
  });
});
