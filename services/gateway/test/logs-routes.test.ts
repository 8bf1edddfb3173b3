/**
 * /api/log and /api/data through the gateway: a relayed request appears in the user's logs and
 * the admin's (with every filter), stats count it, the dashboard buckets it by hour and model,
 * root cleans logs up, and common users cannot use admin routes.
 */
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  Api,
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

/** A CSV download through a logged-in session (the Api helper parses JSON only). */
async function exportCsv(api: Api, path: string, query: Record<string, string>) {
  const session = api as unknown as { cookies: Map<string, string>; userId?: number };
  const url = new URL(`/api${path}`, s.stack.gatewayUrl);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await fetch(url, {
    headers: {
      cookie: [...session.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'New-Api-User': String(session.userId),
    },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    disposition: res.headers.get('content-disposition'),
    text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes),
  };
}

/** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; lines end in CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
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

  it('when an admin exports with filters, then the CSV has the BOM, the header and the listed logs row for row', async () => {
    const listed = (await root.get<Page>('/log/', { username: u.username, type: '2', page_size: '10' })).body.data;
    const all = await exportCsv(root, '/log/export', { username: u.username, type: '2' });
    expect(all.status).toBe(200);
    expect(all.type).toBe('text/csv; charset=utf-8');
    expect(all.disposition).toMatch(/^attachment; filename="logs-\d{8}-\d{6}\.csv"$/);
    expect(all.text.startsWith('\uFEFFid,created_at,time,type,user_id,username,token_name,model_name,quota,')).toBe(
      true,
    );
    const [head, ...rows] = parseCsv(all.text.slice(1));
    expect(head).toContain('channel');
    const byId = new Map(rows.map((r) => [Number(r[0]), Object.fromEntries(head!.map((h, i) => [h, r[i]]))]));
    expect(byId.size).toBe(2);
    for (const item of listed?.items ?? []) {
      const row = byId.get(item.id);
      expect(row).toMatchObject({
        type: '2',
        username: u.username,
        model_name: model,
        token_name: 'test-token',
        quota: String(item.quota),
        prompt_tokens: '9',
        completion_tokens: '3',
        channel: String(channelId),
        is_stream: String(item.is_stream),
      });
      expect(JSON.parse(row?.other ?? '{}').admin_info.use_channel).toEqual([channelId]);
    }
    expect(
      parseCsv((await exportCsv(root, '/log/export', { username: u.username, model_name: 'nope' })).text),
    ).toHaveLength(1);
    expect(parseCsv((await exportCsv(root, '/log/export', { username: u.username, type: '5' })).text)).toHaveLength(1);
    const bad = await exportCsv(root, '/log/export', { type: 'x' });
    expect(bad.type).toContain('application/json');
    expect(JSON.parse(bad.text)).toMatchObject({ success: false, message: '无效的日志类型' });
  });

  it('when root changes options and creates a user, then the audit entries carry who, where, old and new values, secrets masked', async () => {
    const tag = Date.now().toString(36);
    for (const value of [`notice-a-${tag}`, `notice-b-${tag}`]) {
      expect((await root.put('/option/', { key: 'Notice', value })).body.success).toBe(true);
    }
    expect((await root.put('/option/', { key: 'SMTPToken', value: `smtp-secret-${tag}` })).body.success).toBe(true);
    const name = `au${tag}`.slice(0, 12);
    expect((await root.post('/user/', { username: name, password: 'password123' })).body.success).toBe(true);
    // A route the trail has no words for: recorded by its admin guard, with field names only.
    const models = await root.post('/channel/fetch_models', { type: 1, base_url: fake.url, key: 'k' });
    expect(models.body.success).toBe(true);
    const fetched = '管理操作 POST /api/channel/fetch_models，字段：type、base_url、key';
    const res = await eventually(
      () => root.get<Page>('/log/', { type: '3', username: 'root', page_size: '50' }),
      (r) => {
        const texts = (r.body.data?.items ?? []).map((i) => String((i as { content?: string }).content));
        return texts.filter((t) => t.includes(tag)).length >= 3 && texts.includes(fetched);
      },
    );
    const items = (res.body.data?.items ?? []) as (LogItem & { content: string; ip: string; user_id: number })[];
    const notice = items.find((i) => i.content.includes(`「notice-b-${tag}」`));
    expect(notice?.content).toBe(`修改系统设置 Notice：「notice-a-${tag}」→「notice-b-${tag}」`);
    expect(notice).toMatchObject({ type: 3, username: 'root', user_id: 1 });
    expect(notice?.ip).toMatch(/127\.0\.0\.1|::1/);
    const secret = items.find((i) => i.content.startsWith('修改系统设置 SMTPToken'));
    expect(secret?.content).toMatch(/^修改系统设置 SMTPToken：「(（空）|\*{6})」→「\*{6}」$/);
    expect(items.find((i) => i.content === `创建用户「${name}」（普通用户）`)).toBeDefined();
    // Root exports the trail (type 3) and finds the same entries; no secret anywhere in it.
    const trail = await exportCsv(root, '/log/export', { type: '3', username: 'root' });
    expect(trail.text).toContain(`修改系统设置 Notice：「notice-a-${tag}」→「notice-b-${tag}」`);
    expect(trail.text).not.toContain(`smtp-secret-${tag}`);
    // An admin's refused action (a user may not call it) leaves nothing.
    expect((await user.put('/option/', { key: 'Notice', value: `user-${tag}` })).status).toBe(403);
  });

  it('when a user exports, then only their own logs come, without admin columns, whatever filter they send', async () => {
    expect((await exportCsv(user, '/log/export', {})).status).toBe(403);
    const mine = await exportCsv(user, '/log/self/export', { username: 'root' });
    expect(mine.status).toBe(200);
    const [head, ...rows] = parseCsv(mine.text.slice(1));
    expect(head).not.toContain('channel');
    expect(head).not.toContain('ip');
    const userCol = head!.indexOf('user_id');
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(new Set(rows.map((r) => r[userCol]))).toEqual(new Set([String(u.userId)]));
    expect(mine.text).not.toContain('admin_info');
    expect((await fetch(`${s.stack.gatewayUrl}/api/log/self/export`)).status).toBe(401);
    const tooLong = await exportCsv(user, '/log/self/export', { start_timestamp: '1' });
    expect(JSON.parse(tooLong.text)).toEqual({ success: false, message: '时间跨度不能超过 1 个月' });
  });

  it('when logs and usage are looked up by key, then new-api answers come, and a bad key is a 401', async () => {
    const byKey = (path: string, auth?: string) =>
      fetch(`${s.stack.gatewayUrl}/api${path}`, { headers: auth ? { authorization: auth } : {} });
    const logs = await byKey('/log/token', `Bearer ${u.key}`);
    expect(logs.status).toBe(200);
    const body = (await logs.json()) as { success: boolean; data: LogItem[] };
    expect(body.success).toBe(true);
    expect(body.data).toHaveLength(2);
    expect(body.data[0]).toMatchObject({ type: 2, model_name: model, token_name: 'test-token', prompt_tokens: 9 });
    expect(body.data[0]?.channel).toBeUndefined();
    expect(body.data[0]!.id).toBeGreaterThan(body.data[1]!.id);
    const usage = (await (await byKey('/usage/token/', `Bearer ${u.key}`)).json()) as Record<string, unknown>;
    const each = Math.round((9 + 3 * 4) * 0.075);
    expect(usage).toMatchObject({
      code: true,
      message: 'ok',
      data: { object: 'token_usage', name: 'test-token', total_used: 2 * each, unlimited_quota: true, expires_at: 0 },
    });
    const data = usage.data as { total_granted: number; total_available: number };
    expect(data.total_granted).toBe(data.total_available + 2 * each);
    const none = await byKey('/log/token');
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ success: false, message: '未提供令牌' });
    for (const path of ['/log/token', '/usage/token']) {
      const bad = await byKey(path, 'Bearer sk-nosuchkey000000000000000000000000000000000000000');
      expect(bad.status).toBe(401);
      expect(await bad.json()).toEqual({ success: false, message: '无效的令牌' });
    }
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
