/**
 * /api/log and /api/data through the gateway: a relayed request appears in the user's logs and
 * the admin's (with every filter), stats count it, the dashboard buckets it by hour and model,
 * root cleans logs up, and common users cannot use admin routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../relay/test/fakes/fake-provider.ts';
import {
  createChannel,
  eventually,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '../../relay/test/relay-harness.ts';
import { Api } from './billing-harness.ts';

let s: RelayStack;
let fake: FakeProvider;
let root: Api;
let user: Api;
let u: Awaited<ReturnType<typeof userWithToken>>;
let model: string;
let channelId: number;

interface LogItem {
  id: number;
  type: number;
  username: string;
  model_name: string;
  token_name: string;
  quota: number;
  channel?: number;
  other: string;
  prompt_tokens: number;
  completion_tokens: number;
  is_stream: boolean;
}
interface Page {
  items: LogItem[];
  total: number;
  page: number;
  page_size: number;
}

beforeAll(async () => {
  s = await startRelayStack({ LOGS_DATA_FLUSH_MS: '300' });
  fake = await startFakeProvider({ kind: 'openai', key: 'k', reply: 'one two three', promptTokens: 9 });
  model = modelName('gpt-4o-mini');
  u = await userWithToken(s);
  channelId = await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: model });
  await routable(s.stack.relayUrl, u.key, model);
  for (const stream of [false, true]) {
    const res = await fetch(`${s.stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream }),
    });
    expect(res.status).toBe(200);
    await res.text();
  }
  root = new Api(s.stack.gatewayUrl);
  await root.login('root', '123456');
  user = new Api(s.stack.gatewayUrl);
  await user.login(u.username, 'password123');
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

describe('/api/log and /api/data', () => {
  it('when a user reads their logs, then both requests are there without admin details', async () => {
    const res = await eventually(
      () => user.get<Page>('/log/self/', { p: '1', page_size: '10', type: '2' }),
      (r) => (r.body.data?.items.length ?? 0) >= 2,
    );
    expect(res.body.success).toBe(true);
    const data = res.body.data as Page;
    expect(data).toMatchObject({ total: 2, page: 1, page_size: 10 });
    expect(data.items[0]).toMatchObject({
      type: 2,
      username: u.username,
      model_name: model,
      token_name: 'test-token',
      prompt_tokens: 9,
      completion_tokens: 3,
    });
    expect(data.items[0]?.channel).toBeUndefined();
    expect(JSON.parse(data.items[0]?.other ?? '{}').admin_info).toBeUndefined();
    expect(data.items.map((i) => i.is_stream).sort()).toEqual([false, true]);
  });

  it('when an admin filters logs, then username, model, token, channel, type and time filters apply', async () => {
    const q = (extra: Record<string, string>) => root.get<Page>('/log/', { p: '1', page_size: '10', ...extra });
    expect((await q({ username: u.username })).body.data?.total).toBe(2);
    expect(
      (
        await q({
          username: u.username,
          model_name: model,
          token_name: 'test-token',
          channel: String(channelId),
          type: '2',
        })
      ).body.data?.total,
    ).toBe(2);
    expect((await q({ username: u.username, type: '5' })).body.data?.total).toBe(0);
    expect((await q({ username: u.username, model_name: 'nope' })).body.data?.total).toBe(0);
    const now = Math.floor(Date.now() / 1000);
    expect((await q({ username: u.username, start_timestamp: String(now + 3600) })).body.data?.total).toBe(0);
    expect(
      (await q({ username: u.username, start_timestamp: String(now - 3600), end_timestamp: String(now + 60) })).body
        .data?.total,
    ).toBe(2);
    const item = (await q({ username: u.username })).body.data?.items[0];
    expect(item?.channel).toBe(channelId);
    expect(JSON.parse(item?.other ?? '{}').admin_info.use_channel).toEqual([channelId]);
  });

  it('when stats are asked, then quota, rpm and tpm cover the requests', async () => {
    const self = await user.get<{ quota: number; rpm: number; tpm: number }>('/log/self/stat', { type: '2' });
    const each = Math.round((9 + 3 * 4) * 0.075);
    expect(self.body.data).toEqual({ quota: 2 * each, rpm: 2, tpm: 24 });
    const admin = await root.get<{ quota: number }>('/log/stat', { username: u.username });
    expect(admin.body.data?.quota).toBe(2 * each);
  });

  it('when the dashboard is asked, then the hour bucket of the model holds both requests', async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await eventually(
      () =>
        user.get<{ model_name: string; count: number; token_used: number; quota: number; created_at: number }[]>(
          '/data/self',
          { start_timestamp: String(now - 3600), end_timestamp: String(now + 60) },
        ),
      (r) => (r.body.data ?? []).some((d) => d.model_name === model && d.count === 2),
    );
    const bucket = res.body.data?.find((d) => d.model_name === model);
    expect(bucket).toMatchObject({ count: 2, token_used: 24, quota: 2 * Math.round((9 + 3 * 4) * 0.075) });
    expect((bucket?.created_at ?? 1) % 3600).toBe(0);
    const admin = await root.get<unknown[]>('/data/', {
      username: u.username,
      start_timestamp: String(now - 3600),
      end_timestamp: String(now + 60),
    });
    expect(admin.body.data).toHaveLength(1);
    const tooLong = await user.get('/data/self', {
      start_timestamp: String(now - 40 * 86400),
      end_timestamp: String(now),
    });
    expect(tooLong.body).toMatchObject({ success: false, message: '时间跨度不能超过 1 个月' });
  });

  it('when a common user calls admin routes, then they are refused; root deletes old logs and gets the count', async () => {
    expect((await user.get('/log/')).status).toBe(403);
    expect((await user.del('/log/?target_timestamp=1')).status).toBe(403);
    const none = await root.call('DELETE', '/log/', undefined, { target_timestamp: '1' });
    expect(none.body).toMatchObject({ success: true, data: 0 });
    const missing = await root.call('DELETE', '/log/', undefined, {});
    expect(missing.body).toMatchObject({ success: false, message: '请选择日志记录时间' });
    const all = await root.call('DELETE', '/log/', undefined, {
      target_timestamp: String(Math.floor(Date.now() / 1000) + 10),
    });
    expect(all.body.success).toBe(true);
    expect(all.body.data).toBeGreaterThanOrEqual(2);
    expect((await user.get<Page>('/log/self/')).body.data?.total).toBe(0);
  });
});
