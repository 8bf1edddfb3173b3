/**
 * Multi-key channels through the admin API: created with multi_key_mode and one key per line
 * (each line checked against the type's key format), shown in the list with their key count and
 * no key text, refused with clear messages for a wrong mode, a bad line, or Vertex AI.
 */
import type { Stack } from '@aigw/local-stack/stack';
import { type Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Row {
  id: number;
  key: string;
  multi_key_mode: string;
  multi_key_status: string;
}

describe('multi-key channels through the gateway', () => {
  let stack: Stack;
  let admin: Api;
  let root: Api;
  beforeAll(async () => {
    stack = await startMoneyStack();
    admin = (await userApi(stack, { role: 10 })).api;
    root = await rootApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('when an admin creates an AWS channel with three keys in turn, then the row shows the mode and 3 keys and no key text', async () => {
    const res = await admin.post<number[]>('/channel/', {
      name: 'bedrock pool',
      type: 33,
      key: 'AKIA1|s1|us-east-1\nAKIA2|s2|us-west-2\n\nAKIA3|s3|eu-west-1\n',
      models: 'claude-3-5-sonnet-20241022',
      group: 'default',
      multi_key_mode: 'polling',
    });
    expect(res.body).toMatchObject({ success: true });
    const id = res.body.data?.[0] ?? 0;
    const list = await admin.get<{ items: Row[] }>('/channel/?p=1&page_size=100');
    const row = list.body.data?.items.find((r) => r.id === id);
    expect(row?.multi_key_mode).toBe('polling');
    expect(JSON.parse(row?.multi_key_status ?? '{}')).toEqual({ size: 3, disabled: [] });
    expect(row?.key).toBe('');
    const full = await root.get<Row>(`/channel/${id}`);
    expect(full.body.data?.key).toBe('AKIA1|s1|us-east-1\nAKIA2|s2|us-west-2\nAKIA3|s3|eu-west-1');
  });

  it('when the mode, a key line or the type does not fit, then the admin gets the reason, not a 5xx', async () => {
    const base = { name: 'x', models: 'm', group: 'default' };
    const badMode = await admin.post('/channel/', { ...base, type: 1, key: 'a\nb', multi_key_mode: 'round-robin' });
    expect(badMode.body).toMatchObject({
      success: false,
      message: '多密钥模式只能是 random（随机）或 polling（轮询）',
    });
    const badLine = await admin.post('/channel/', {
      ...base,
      type: 33,
      key: 'AKIA1|s1|us-east-1\nbroken',
      multi_key_mode: 'random',
    });
    expect(badLine.body).toMatchObject({ success: false, message: '密钥格式错误，应为 Ak|Sk|Region' });
    const vertex = await admin.post('/channel/', {
      ...base,
      type: 41,
      key: '{}',
      other: 'us-central1',
      multi_key_mode: 'random',
    });
    expect(vertex.body).toMatchObject({ success: false, message: 'Vertex AI 渠道不支持多密钥' });
    for (const r of [badMode, badLine, vertex]) expect(r.status).toBeLessThan(500);
  });

  it('when a single-key channel is switched to random with several keys, then it becomes a multi-key channel', async () => {
    const res = await admin.post<number[]>('/channel/', {
      name: 'one',
      type: 1,
      key: 'sk-one',
      models: 'm',
      group: 'default',
    });
    const id = res.body.data?.[0] ?? 0;
    const upd = await admin.put<Row>('/channel/', { id, key: 'sk-one\nsk-two', multi_key_mode: 'random' });
    expect(upd.body).toMatchObject({ success: true });
    expect(upd.body.data?.multi_key_mode).toBe('random');
    expect(JSON.parse(upd.body.data?.multi_key_status ?? '{}').size).toBe(2);
    const back = await admin.put('/channel/', { id, multi_key_mode: '' });
    expect(back.body).toMatchObject({
      success: false,
      message: '单密钥渠道只能填写一个密钥；多个密钥请开启多密钥模式',
    });
  });

  it('when an admin saves overrides, then valid ones are stored and listed, and an invalid one is refused with nothing saved', async () => {
    const created = await admin.post<number[]>('/channel/', {
      name: 'overrides',
      type: 1,
      key: 'sk-ov',
      models: 'm',
      group: 'default',
      param_override: '{"operations":[{"path":"metadata.a","mode":"set","value":1}]}',
      header_override: { 'X-Key': '{api_key}' },
      setting: '{"system_prompt":"Be brief","thinking_to_content":true}',
      settings: '{"azure_responses_version":"preview"}',
    });
    expect(created.body).toMatchObject({ success: true });
    const id = created.body.data?.[0] ?? 0;
    const row = (
      await admin.get<{ items: Record<string, string>[] }>('/channel/?p=1&page_size=100')
    ).body.data?.items.find((r) => Number(r.id) === id);
    expect(row?.header_override).toBe('{"X-Key":"{api_key}"}');
    expect(JSON.parse(row?.setting ?? '{}')).toEqual({ system_prompt: 'Be brief', thinking_to_content: true });
    const bad = [
      [{ param_override: '{"temperature": }' }, '参数覆盖必须是合法的 JSON 格式！'],
      [{ setting: '{"force_format":"yes"}' }, '渠道额外设置中 force_format 必须是布尔值'],
      [{ header_override: '["x"]' }, '请求头覆盖必须是合法的 JSON 格式！'],
      [{ name: 'renamed', settings: '{"disable_store":1}' }, '其他设置中 disable_store 必须是布尔值'],
    ] as const;
    for (const [fields, message] of bad) {
      const r = await admin.put('/channel/', { id, ...fields });
      expect(r.status).toBeLessThan(500);
      expect(r.body).toMatchObject({ success: false, message });
    }
    const after = await admin.get<Record<string, string>>(`/channel/${id}`);
    expect(after.body.data?.name).toBe('overrides');
    expect(after.body.data?.settings).toBe('{"azure_responses_version":"preview"}');
  });

  it('when an admin manages the keys of a multi-key channel, then get_key_status, disable, enable and delete answer as new-api', async () => {
    const created = await admin.post<number[]>('/channel/', {
      name: 'managed',
      type: 1,
      key: 'sk-aaaaaaaaaaaa-1\nsk-bbbbbbbbbbbb-2\nsk-cccccccccccc-3',
      models: 'm',
      group: 'default',
      multi_key_mode: 'random',
    });
    const channel_id = created.body.data?.[0] ?? 0;
    const manage = (body: Record<string, unknown>) =>
      admin.post<unknown>('/channel/multi_key/manage', { channel_id, ...body });
    expect((await manage({ action: 'disable_key', key_index: 1 })).body).toEqual({
      success: true,
      message: '密钥已禁用',
    });
    const status = await manage({ action: 'get_key_status', page: 1, page_size: 2 });
    expect(status.body).toMatchObject({
      success: true,
      data: {
        total: 3,
        page: 1,
        page_size: 2,
        total_pages: 2,
        enabled_count: 2,
        manual_disabled_count: 1,
        auto_disabled_count: 0,
        keys: [
          { index: 0, status: 1, key_preview: 'sk-a********aa-1' },
          { index: 1, status: 2 },
        ],
      },
    });
    const disabledOnly = await manage({ action: 'get_key_status', status: 2 });
    expect((disabledOnly.body as { data: { keys: { index: number }[] } }).data.keys.map((k) => k.index)).toEqual([1]);
    expect((await manage({ action: 'delete_key', key_index: 0 })).body).toMatchObject({ message: '密钥已删除' });
    const row = await root.get<Row>(`/channel/${channel_id}`);
    expect(row.body.data?.key).toBe('sk-bbbbbbbbbbbb-2\nsk-cccccccccccc-3');
    expect(JSON.parse(row.body.data?.multi_key_status ?? '{}').disabled).toMatchObject([{ index: 1, status: 2 }]);
    expect((await manage({ action: 'enable_key', key_index: 0 })).body).toMatchObject({ message: '密钥已启用' });
    for (const [body, message] of [
      [{ action: 'enable_key', key_index: 9 }, '密钥索引超出范围'],
      [{ action: 'disable_key' }, '未指定要禁用的密钥索引'],
      [{ action: 'delete_disabled_keys' }, '没有需要删除的自动禁用密钥'],
      [{ action: 'explode' }, '不支持的操作'],
    ] as const) {
      const r = await manage(body);
      expect(r.status).toBeLessThan(500);
      expect(r.body).toMatchObject({ success: false, message });
    }
    const single = await admin.post<number[]>('/channel/', {
      name: 's',
      type: 1,
      key: 'sk-s',
      models: 'm',
      group: 'default',
    });
    const notMulti = await admin.post('/channel/multi_key/manage', {
      channel_id: single.body.data?.[0],
      action: 'get_key_status',
    });
    expect(notMulti.body).toMatchObject({ success: false, message: '该渠道不是多密钥模式' });
  });
});
