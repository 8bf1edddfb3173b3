import { createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../channels/test/support/fake-openai.ts';
import { type Api, rootApi, startMoneyStack, userApi } from './billing-harness.ts';

interface ChannelJson {
  id: number;
  name: string;
  type: number;
  key: string;
  base_url: string;
  other: string;
  models: string;
  group: string;
  status: number;
  priority: number;
  weight: number;
  response_time: number;
  test_time: number;
  balance: number;
  other_info: string;
  auto_ban: number;
  model_mapping: string;
}
interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

describe('channel administration through the gateway', () => {
  let stack: Stack;
  let admin: Api;
  /** Only root reads keys in full (admins get them masked: channels-key-access.test.ts). */
  let root: Api;
  let fake: FakeOpenAi;
  let grpc: ReturnType<typeof createClient<typeof ChannelsService>>;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    stack = await startMoneyStack(['relay']);
    admin = (await userApi(stack, { role: 10 })).api;
    root = await rootApi(stack);
    grpc = createClient(ChannelsService, stack.env.CHANNELS_ADDR as string);
  });
  afterAll(async () => {
    grpc?.close();
    await stack?.stop();
    await fake?.close();
  });

  const base = { type: 1, key: 'sk-fake-upstream', models: 'gpt-4o-mini,gpt-4o', group: 'default' };
  const create = async (fields: Record<string, unknown>) => {
    const res = await admin.post<number[]>('/channel/', { ...base, ...fields });
    expect(res.body).toMatchObject({ success: true });
    return res.body.data ?? [];
  };
  const get = async (id: number) => (await root.get<ChannelJson>(`/channel/${id}`)).body.data as ChannelJson;
  const abilitiesOf = async (id: number) =>
    (await grpc.getRelaySnapshot({})).abilities
      .filter((a) => a.channelId === id)
      .map((a) => `${a.group}|${a.model}|${a.priority}|${a.weight}|${a.enabled}`)
      .sort();

  it('when a common user or nobody asks, then channel routes answer 403 or 401', async () => {
    const { api } = await userApi(stack);
    expect((await api.get('/channel/')).status).toBe(403);
    expect((await api.post('/channel/', { ...base, name: 'x' })).status).toBe(403);
    expect((await api.get('/models')).status).toBe(403);
    const anonymous = (await import('./billing-harness.ts')).Api;
    expect((await new anonymous(stack.gatewayUrl).get('/channel/')).status).toBe(401);
  });

  it('when the form is invalid, then the spec messages come back', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '', key: 'k' }, '请填写渠道名称和渠道密钥！'],
      [{ name: 'n', key: '' }, '请填写渠道名称和渠道密钥！'],
      [{ name: 'n', models: '' }, '请至少选择一个模型！'],
      [{ name: 'n', model_mapping: '{"a":' }, '模型映射必须是合法的 JSON 格式！'],
      [{ name: 'n', status_code_mapping: '{"400":"oops"}' }, '状态码复写必须是合法的 JSON 格式，例如 {"400":"500"}！'],
      [{ name: 'n', priority: -1000 }, '优先级不能小于 -999'],
      [{ name: 'n', weight: -1 }, '权重必须是不小于 0 的整数'],
      [{ name: 'n', type: 15, key: 'only-one-part' }, '密钥格式错误，应为 APIKey|SecretKey'],
      [{ name: 'n', type: 99 }, '未知的渠道类型'],
    ];
    for (const [input, message] of cases) {
      expect((await admin.post('/channel/', { ...base, ...input })).body).toMatchObject({ success: false, message });
    }
  });

  it('when a channel is created, then defaults apply, base_url loses its slash, and keys stay out of lists', async () => {
    const [id] = await create({
      name: 'azure',
      type: 3,
      base_url: 'https://az.example.test/',
      models: ['gpt-4o'],
      priority: -999,
    });
    const [spark] = await create({ name: 'spark', type: 18, key: 'app|secret|key', models: 'SparkDesk-v3.5' });
    const ch = await get(id as number);
    expect(ch).toMatchObject({
      type: 3,
      other: '2023-06-01-preview',
      base_url: 'https://az.example.test',
      priority: -999,
      status: 1,
      key: 'sk-fake-upstream',
    });
    expect((await get(spark as number)).other).toBe('v2.1');
    const list = await admin.get<Page<ChannelJson>>('/channel/', { p: '1', page_size: '50', id_sort: 'true' });
    expect(list.body.data?.items.length).toBeGreaterThanOrEqual(2);
    expect(list.body.data?.items.every((c) => c.key === '')).toBe(true);
    expect(list.body.data?.items[0]?.id).toBeGreaterThan(list.body.data?.items[1]?.id ?? 0);
  });

  it('when keys are given one per line, then one channel per key is made', async () => {
    const ids = await create({ name: 'bulk', key: 'k-one\nk-two\n\nk-three' });
    expect(ids).toHaveLength(3);
    expect((await Promise.all(ids.map(get))).map((c) => c.key)).toEqual(['k-one', 'k-two', 'k-three']);
  });

  it('when channels are searched, then keyword (name, id, key), group and model filter them', async () => {
    const [id] = await create({
      name: 'needle-channel',
      key: 'sk-unique-needle-key',
      group: 'vip',
      models: 'rare-model',
    });
    const find = async (q: Record<string, string>) =>
      ((await admin.get<Page<ChannelJson>>('/channel/search', q)).body.data?.items ?? []).map((c) => c.id);
    expect(await find({ keyword: 'needle-chan' })).toEqual([id]);
    expect(await find({ keyword: 'unique-needle' })).toEqual([id]);
    expect(await find({ keyword: String(id) })).toContain(id);
    expect(await find({ group: 'vip', model: 'rare-model' })).toEqual([id]);
    expect(await find({ group: 'default', model: 'rare-model' })).toEqual([]);
  });

  it('when a channel changes, then its abilities follow exactly (groups x models, priority, weight, enabled)', async () => {
    const [id] = await create({ name: 'abilities', models: 'm1,m2', group: 'default,vip', priority: 5, weight: 3 });
    expect(await abilitiesOf(id as number)).toEqual([
      'default|m1|5|3|true',
      'default|m2|5|3|true',
      'vip|m1|5|3|true',
      'vip|m2|5|3|true',
    ]);
    const upd = await admin.put<ChannelJson>('/channel/', { id, models: ['m2', 'm3'], groups: ['vip'], priority: 7 });
    expect(upd.body).toMatchObject({ success: true, message: '渠道更新成功！' });
    expect(await abilitiesOf(id as number)).toEqual(['vip|m2|7|3|true', 'vip|m3|7|3|true']);
    await admin.put('/channel/', { id, status: 2 });
    expect(await abilitiesOf(id as number)).toEqual(['vip|m2|7|3|false', 'vip|m3|7|3|false']);
    const fixed = await admin.post<number>('/channel/fix');
    expect(fixed.body.success).toBe(true);
    expect(fixed.body.data).toBeGreaterThan(0);
    expect(await abilitiesOf(id as number)).toEqual(['vip|m2|7|3|false', 'vip|m3|7|3|false']);
    await admin.del(`/channel/${id}/`);
    expect(await abilitiesOf(id as number)).toEqual([]);
  });

  it('when the relay picks a channel, then tiers by priority and exclusions hold', async () => {
    const [hi] = await create({ name: 'hi', models: 'tiered', group: 'tier', priority: 10, weight: 1 });
    const [lo] = await create({ name: 'lo', models: 'tiered', group: 'tier', priority: 0, weight: 1 });
    const pick = async (retry: number, exclude: number[] = []) =>
      (await grpc.selectChannel({ group: 'tier', model: 'tiered', retry, excludeChannelIds: exclude })).channel;
    expect((await pick(0))?.id).toBe(hi);
    expect((await pick(0))?.key).toBe('sk-fake-upstream');
    expect((await pick(1))?.id).toBe(lo);
    expect((await pick(0, [hi as number]))?.id).toBe(lo);
    await expect(pick(0, [hi as number, lo as number])).rejects.toThrow('无可用渠道');
  });

  it('when priority and weight are edited inline or a channel is copied, then only those change', async () => {
    const [id] = await create({ name: 'inline', model_mapping: '{"gpt-3.5-turbo":"gpt-3.5-turbo-0125"}' });
    const upd = await admin.put<ChannelJson>('/channel/', { id, priority: 3, weight: 9 });
    expect(upd.body.data).toMatchObject({ priority: 3, weight: 9, name: 'inline', key: '' });
    expect((await get(id as number)).key).toBe('sk-fake-upstream');
    const original = await get(id as number);
    const [copy] = await create({ ...original, id: undefined, name: `${original.name}_复制` });
    expect(await get(copy as number)).toMatchObject({
      name: 'inline_复制',
      priority: 3,
      weight: 9,
      model_mapping: original.model_mapping,
    });
  });

  it('when channels are deleted singly, in a batch or as the disabled ones, then the counts come back', async () => {
    const ids = await create({ name: 'doomed', key: 'd1\nd2\nd3\nd4' });
    const [a, b, c, d] = ids as [number, number, number, number];
    expect((await admin.del(`/channel/${a}/`)).body.success).toBe(true);
    expect((await admin.get(`/channel/${a}`)).body.message).toBe('渠道未找到，请刷新页面后重试。');
    expect((await admin.post<number>('/channel/batch', { ids: [b] })).body.data).toBe(1);
    expect((await admin.post('/channel/batch', { ids: [] })).body.message).toBe('请先选择要删除的通道！');
    await admin.put('/channel/', { id: c, status: 2 });
    const removed = await admin.del<number>('/channel/disabled');
    expect(removed.body.data).toBeGreaterThanOrEqual(1);
    expect((await admin.get(`/channel/${c}`)).body.success).toBe(false);
    expect((await get(d)).status).toBe(1);
  });

  it('when model lists are asked, then types map to names and enabled abilities list their models', async () => {
    const byType = (await admin.get<Record<string, string[]>>('/models')).body.data ?? {};
    // The spec's 30 types, new-api's OpenAI-format ones (20, 27, 43, 45, 48), the video ones (50, 51, 55)
    // and the rest of new-api's list (resellers 6-13, MokaAI 44, Qianfan v2 46, Xinference 47, Coze 49,
    // Vidu 52, Submodel 53, Doubao video 54, Replicate 56, advanced custom 58, Sub2API 59, New API 60).
    const spec = [1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36, 37];
    const more = [38, 39, 40, 41, 42, 20, 27, 43, 45, 48, 50, 51, 55];
    const newApi = [6, 7, 9, 10, 12, 13, 44, 46, 47, 49, 52, 53, 54, 56, 58, 59, 60];
    expect(Object.keys(byType)).toEqual([...spec, ...more, ...newApi].sort((x, y) => x - y).map(String));
    expect(byType['14']).toContain('claude-3-5-sonnet-20241022');
    await create({ name: 'listed', models: 'listed-model' });
    expect((await admin.get<string[]>('/channel/models')).body.data).toContain('listed-model');
  });

  it('when upstream models are fetched, then type 1 lists /v1/models; others and missing keys are refused', async () => {
    const fetched = await admin.post<string[]>('/channel/fetch_models', {
      type: 1,
      base_url: `${fake.url}/`,
      key: 'sk-fake-upstream',
    });
    expect(fetched.body.data).toEqual(['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small']);
    expect((await admin.post('/channel/fetch_models', { type: 14, base_url: fake.url, key: 'k' })).body.message).toBe(
      '仅支持 OpenAI 接口格式',
    );
    expect((await admin.post('/channel/fetch_models', { type: 1, base_url: fake.url, key: '' })).body.message).toBe(
      '请填写密钥',
    );
    expect(
      (await admin.post('/channel/fetch_models', { type: 1, base_url: fake.url, key: 'wrong' })).body.message,
    ).toBe('获取模型列表失败');
    const [id] = await create({ name: 'fetch', base_url: fake.url });
    expect((await admin.get<string[]>(`/channel/fetch_models/${id}`)).body.data).toContain('gpt-4o');
  });

  it('when balances are updated, then providers with an endpoint report it and others are refused', async () => {
    const [id] = await create({ name: 'balance', base_url: fake.url });
    const res = await admin.get<{ balance: number }>(`/channel/update_balance/${id}/`);
    expect(res.body).toMatchObject({ success: true, balance: 74.5 });
    expect((await get(id as number)).balance).toBe(74.5);
    const [claude] = await create({ name: 'claude', type: 14, models: 'claude-3-haiku-20240307' });
    expect((await admin.get(`/channel/update_balance/${claude}/`)).body.message).toBe('该渠道类型暂不支持查询余额');
    expect((await admin.get('/channel/update_balance')).body.success).toBe(true);
  });

  it('when a channel is tested, then a real request goes through the relay adaptor and the time is recorded', async () => {
    const [id] = await create({ name: 'tested', base_url: fake.url, test_model: 'gpt-4o-mini' });
    const res = await admin.get<{ time: number }>(`/channel/test/${id}`);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.time).toBe('number');
    expect(fake.calls).toContain('/v1/chat/completions');
    const ch = await get(id as number);
    expect(ch.response_time).toBeGreaterThan(0);
    expect(ch.test_time).toBeGreaterThan(0);
    const [bad] = await create({ name: 'bad-key', key: 'sk-wrong', base_url: fake.url });
    const failed = await admin.get(`/channel/test/${bad}`);
    expect(failed.body.success).toBe(false);
    expect(String(failed.body.message)).toContain('Incorrect API key');
    expect((await admin.get('/channel/test')).body.success).toBe(true);
  });
});
