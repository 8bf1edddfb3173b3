/**
 * Multi-key channels through the admin API: created with multi_key_mode and one key per line
 * (each line checked against the type's key format), shown in the list with their key count and
 * no key text, refused with clear messages for a wrong mode, a bad line, or Vertex AI.
 */
import type { Stack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, rootApi, startMoneyStack, userApi } from './billing-harness.ts';

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
});
