import { createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { type FakeOpenAi, startFakeOpenAi } from '@aigw/testkit/fakes';
import { type Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMetadata, startFakeMetadata } from './fakes/llm-metadata.ts';

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
  let metadata: FakeMetadata;
  let grpc: ReturnType<typeof createClient<typeof ChannelsService>>;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    metadata = await startFakeMetadata();
    stack = await startMoneyStack(['relay'], { SYNC_UPSTREAM_BASE: metadata.baseUrl });
    admin = (await userApi(stack, { role: 10 })).api;
    root = await rootApi(stack);
    grpc = createClient(ChannelsService, stack.env.CHANNELS_ADDR as string);
  });
  afterAll(async () => {
    grpc?.close();
    await stack?.stop();
    await fake?.close();
    await metadata?.close();
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
    expect((await api.get('/channel/types')).status).toBe(403);
    const anonymous = (await import('@aigw/testkit/harness')).Api;
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

  it('when the channel-type catalogue is asked, then every type comes once with its name, host, key format and form fields, and the same models as /api/models', async () => {
    interface TypeJson {
      type: number;
      name: string;
      name_en: string;
      base_url: string;
      served_by: string;
      key_parts: { sep: string; parts: { name: string; secret: boolean }[] } | null;
      other: { label: { zh: string }; default: string } | null;
      form: { openai_organization: boolean; single_key: boolean };
      models: string[];
    }
    const types = (await admin.get<TypeJson[]>('/channel/types')).body.data ?? [];
    const byType = (await admin.get<Record<string, string[]>>('/models')).body.data ?? {};
    expect(types.map((t) => t.type).sort((x, y) => x - y)).toEqual(Object.keys(byType).map(Number));
    for (const t of types) expect(t.models).toEqual(byType[String(t.type)]);
    const of = (n: number) => types.find((t) => t.type === n);
    expect(types[0]).toMatchObject({ type: 1, name: 'OpenAI', base_url: 'https://api.openai.com', served_by: 'relay' });
    expect(of(1)?.form).toEqual({
      base_url_label: null,
      base_url_placeholder: null,
      openai_organization: true,
      single_key: false,
    });
    expect(
      of(33)
        ?.key_parts?.parts.map((p) => `${p.name}${p.secret ? '*' : ''}`)
        .join(of(33)?.key_parts?.sep),
    ).toBe('Ak|Sk*|Region');
    expect([of(3)?.other?.default, of(18)?.other?.default, of(49)?.other?.label.zh]).toEqual([
      '2023-06-01-preview',
      'v2.1',
      '智能体 ID（Coze 的 bot_id）',
    ]);
    expect([of(41)?.form.single_key, of(51)?.name, of(51)?.name_en, of(51)?.served_by]).toEqual([
      true,
      '即梦',
      'Jimeng',
      'tasks',
    ]);
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

  describe('model catalogue (new-api vendor and model meta, /api/models/missing, sync from upstream)', () => {
    interface MetaJson {
      id: number;
      model_name: string;
      description: string;
      tags: string;
      vendor_id: number;
      endpoints: string;
      status: number;
      sync_official: number;
      name_rule: number;
      bound_channels: { name: string; type: number }[];
      enable_groups: string[];
      matched_models: string[];
    }
    const u = Math.random().toString(36).slice(2, 8);

    it('when a common user asks, then every catalogue route answers 403', async () => {
      const { api } = await userApi(stack);
      const calls = [
        api.get('/models/'),
        api.get('/models/search', { keyword: 'x' }),
        api.get('/models/missing'),
        api.post('/models/', { model_name: `denied-${u}` }),
        api.put('/models/', { id: 1, model_name: `denied-${u}` }),
        api.del('/models/1'),
        api.get('/vendors/'),
        api.post('/vendors/', { name: `denied-${u}` }),
        api.get('/models/sync_upstream/preview'),
        api.post('/models/sync_upstream', {}),
      ];
      expect((await Promise.all(calls)).map((r) => r.status)).toEqual(calls.map(() => 403));
      expect((await admin.get('/models/', { keyword: `denied-${u}` })).body).toMatchObject({ data: { total: 0 } });
    });

    it('when vendors and models are created, edited, searched and deleted, then the values round-trip and names stay unique', async () => {
      const v = await admin.post<{ id: number; name: string }>('/vendors/', { name: `Acme-${u}`, icon: 'OpenAI' });
      expect(v.body).toMatchObject({ success: true, data: { name: `Acme-${u}`, icon: 'OpenAI', status: 1 } });
      const vendorId = v.body.data?.id as number;
      expect((await admin.post('/vendors/', { name: `Acme-${u}` })).body).toMatchObject({
        success: false,
        message: '供应商名称已存在',
      });
      expect((await admin.post('/vendors/', { name: ' ' })).body).toMatchObject({ message: '供应商名称不能为空' });
      const renamed = await admin.put('/vendors/', { id: vendorId, name: `Acme2-${u}`, description: 'd' });
      expect(renamed.body).toMatchObject({ success: true, data: { name: `Acme2-${u}`, description: 'd' } });
      expect((await admin.get('/vendors/search', { keyword: `acme2-${u}` })).body).toMatchObject({
        data: { total: 1, items: [{ id: vendorId }] },
      });

      const [chId] = await create({ name: `cat-ch-${u}`, models: `cat-a-${u},cat-b-${u}`, group: 'default,vip' });
      const created = await admin.post<MetaJson>('/models/', {
        model_name: `cat-a-${u}`,
        description: 'A model',
        tags: 'chat,fast',
        vendor_id: vendorId,
        endpoints: { openai: { path: '/v1/chat/completions', method: 'POST' } },
      });
      expect(created.body).toMatchObject({ success: true });
      const id = created.body.data?.id as number;
      const one = (await admin.get<MetaJson>(`/models/${id}`)).body.data;
      expect(one).toMatchObject({
        model_name: `cat-a-${u}`,
        description: 'A model',
        tags: 'chat,fast',
        vendor_id: vendorId,
        status: 1,
        sync_official: 1,
        name_rule: 0,
        bound_channels: [{ name: `cat-ch-${u}`, type: 1 }],
        enable_groups: ['default', 'vip'],
      });
      expect(JSON.parse(one?.endpoints ?? '')).toEqual({ openai: { path: '/v1/chat/completions', method: 'POST' } });
      expect(chId).toBeGreaterThan(0);

      // A prefix rule matches the served models it starts.
      const rule = await admin.post<MetaJson>('/models/', { model_name: `cat-b`, name_rule: 1, vendor_id: vendorId });
      expect(rule.body.data?.matched_models).toContain(`cat-b-${u}`);
      expect((await admin.post('/models/', { model_name: `cat-a-${u}` })).body).toMatchObject({
        success: false,
        message: '模型名称已存在',
      });
      expect((await admin.post('/models/', { model_name: '' })).body).toMatchObject({ message: '模型名称不能为空' });
      const badRule = await admin.post('/models/', { model_name: `x-${u}`, name_rule: 7 });
      expect(badRule.status).toBe(400);
      expect((await admin.post('/models/', { model_name: `x-${u}`, vendor_id: 987654 })).body).toMatchObject({
        message: '供应商不存在',
      });
      expect((await admin.get('/models/', { keyword: `x-${u}` })).body).toMatchObject({ data: { total: 0 } });

      const edit = await admin.put<MetaJson>('/models/', {
        id,
        model_name: `cat-a-${u}`,
        description: 'edited',
        status: 0,
        vendor_id: vendorId,
      });
      expect(edit.body.data).toMatchObject({ description: 'edited', status: 0, tags: '' });
      const statusOnly = await admin.put<MetaJson>('/models/', { id, status: 1 }, { status_only: 'true' });
      expect(statusOnly.body.data).toMatchObject({ description: 'edited', status: 1 });
      const byVendor = await admin.get<{ items: MetaJson[]; vendor_counts: Record<string, number> }>('/models/search', {
        vendor: String(vendorId),
      });
      expect(byVendor.body.data?.items.map((m) => m.model_name).sort()).toEqual(['cat-b', `cat-a-${u}`].sort());
      expect(byVendor.body.data?.vendor_counts[String(vendorId)]).toBe(2);
      expect(
        (await admin.get<{ items: MetaJson[] }>('/models/search', { vendor: `acme2-${u}` })).body.data?.items,
      ).toHaveLength(2);

      expect((await admin.del(`/models/${rule.body.data?.id}`)).body).toMatchObject({ success: true });
      expect((await admin.get(`/models/${rule.body.data?.id}`)).body).toMatchObject({
        success: false,
        message: '模型不存在',
      });
      // GET /models (no slash) is still the channel editor's type -> models map.
      expect((await admin.get<Record<string, string[]>>('/models')).body.data?.['14']).toBeDefined();
    });

    it('when channels serve models without meta or price, then /models/missing lists them', async () => {
      await create({ name: `miss-${u}`, models: `miss-a-${u},miss-b-${u},gpt-4o-2024-08-06` });
      await admin.post('/models/', { model_name: `miss-a-${u}` });
      const r = await admin.get<string[]>('/models/missing');
      const body = r.body as unknown as { data: string[]; unpriced: string[] };
      expect(body.data).toContain(`miss-b-${u}`);
      expect(body.data).not.toContain(`miss-a-${u}`);
      // Neither has a ModelPrice or ModelRatio entry; the dated gpt-4o is priced by gpt-4o's.
      expect(body.unpriced).toEqual(expect.arrayContaining([`miss-a-${u}`, `miss-b-${u}`]));
      expect(body.unpriced).not.toContain('gpt-4o-2024-08-06');
    });

    it('when the upstream metadata is synced, then missing models are created with their vendors and admin edits are kept', async () => {
      const [name, kept, unknown] = [`sync-new-${u}`, `sync-kept-${u}`, `sync-unknown-${u}`];
      await create({ name: `sync-${u}`, models: `${name},${kept},${unknown}` });
      const mine = await admin.post<MetaJson>('/models/', { model_name: kept, description: 'mine', sync_official: 0 });
      metadata.models = [
        {
          model_name: name,
          description: 'from upstream',
          icon: 'Up',
          tags: 'a,b',
          vendor_name: `UpVendor-${u}`,
          name_rule: 0,
          status: 1,
          endpoints: ['openai'],
        },
        {
          model_name: kept,
          description: 'upstream text',
          icon: '',
          tags: '',
          vendor_name: '',
          name_rule: 0,
          status: 1,
        },
      ];
      metadata.vendors = [{ name: `UpVendor-${u}`, description: 'vendor from upstream', icon: 'Up', status: 1 }];

      const preview = await admin.get<{ missing: string[]; conflicts: unknown[] }>('/models/sync_upstream/preview');
      expect(preview.body.data?.missing).toContain(name);
      expect(preview.body.data?.missing).not.toContain(kept);
      expect(JSON.stringify(preview.body.data?.conflicts)).not.toContain(kept);
      expect((await admin.get('/models/search', { keyword: name })).body).toMatchObject({ data: { total: 0 } });

      const applied = await admin.post<{ created_list: string[]; skipped_models: string[]; created_vendors: number }>(
        '/models/sync_upstream',
        { overwrite: [{ model_name: kept, fields: ['description'] }] },
      );
      expect(applied.body).toMatchObject({ success: true, data: { created_vendors: 1, updated_models: 0 } });
      expect(applied.body.data?.created_list).toContain(name);
      expect(applied.body.data?.skipped_models).toContain(unknown);
      const synced = (await admin.get<{ items: MetaJson[] }>('/models/search', { keyword: name })).body.data?.items[0];
      expect(synced).toMatchObject({ description: 'from upstream', tags: 'a,b', sync_official: 1 });
      expect(JSON.parse(synced?.endpoints ?? '')).toEqual(['openai']);
      const vendor = (await admin.get<{ name: string; description: string }>(`/vendors/${synced?.vendor_id}`)).body
        .data;
      expect(vendor).toMatchObject({ name: `UpVendor-${u}`, description: 'vendor from upstream' });
      expect((await admin.get<MetaJson>(`/models/${mine.body.data?.id}`)).body.data?.description).toBe('mine');
      expect(metadata.requests).toContain('/api/newapi/models.json');

      // With sync on, an overwrite asked for replaces only the named fields.
      await admin.put('/models/', { id: synced?.id, model_name: name, description: 'admin text', tags: 'mine' });
      const differs = await admin.get<{ conflicts: { model_name: string; fields: unknown[] }[] }>(
        '/models/sync_upstream/preview',
      );
      expect(differs.body.data?.conflicts.find((c) => c.model_name === name)?.fields).toEqual(
        expect.arrayContaining([
          { field: 'description', local: 'admin text', upstream: 'from upstream' },
          { field: 'tags', local: 'mine', upstream: 'a,b' },
        ]),
      );
      const again = await admin.post('/models/sync_upstream', {
        overwrite: [{ model_name: name, fields: ['description'] }],
      });
      expect(again.body).toMatchObject({ data: { updated_models: 1, created_models: 0 } });
      expect((await admin.get<MetaJson>(`/models/${synced?.id}`)).body.data).toMatchObject({
        description: 'from upstream',
        tags: 'mine',
      });
    });
  });
});
