/**
 * Who reads a channel's upstream key (docs/security.md "Secrets"): root reads it in full, and each
 * full read is recorded as an admin log entry (type 3); an admin gets it masked (first 4 and last
 * 4 characters), and saving the edit form back with the masked key keeps the stored key.
 */
import type { Stack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { type Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface ChannelJson {
  id: number;
  name: string;
  key: string;
  priority: number;
}
interface LogJson {
  type: number;
  content: string;
  username: string;
}

describe('channel keys through the gateway', () => {
  let stack: Stack;
  let admin: Api;
  let root: Api;
  beforeAll(async () => {
    stack = await startMoneyStack(['logs']);
    admin = (await userApi(stack, { role: 10 })).api;
    root = await rootApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const KEY = 'sk-abcd-the-secret-middle-wxyz';
  const create = async (name: string, key = KEY) => {
    const res = await admin.post<number[]>('/channel/', {
      name,
      type: 1,
      key,
      models: 'gpt-4o-mini',
      group: 'default',
    });
    expect(res.body).toMatchObject({ success: true });
    return (res.body.data ?? [])[0] as number;
  };
  const read = async (api: Api, id: number) => (await api.get<ChannelJson>(`/channel/${id}`)).body.data as ChannelJson;

  it('when an admin reads a channel, then the key is masked to its first and last 4 characters; lists and searches hold no key', async () => {
    const id = await create('masked-read');
    const got = await read(admin, id);
    expect(got.key).not.toContain('secret');
    expect(got.key.startsWith('sk-a')).toBe(true);
    expect(got.key.endsWith('wxyz')).toBe(true);
    const list = await admin.get<{ items: ChannelJson[] }>('/channel/', { p: '1', page_size: '100' });
    expect(list.body.data?.items.every((c) => !c.key.includes('secret'))).toBe(true);
    const found = await admin.get<{ items: ChannelJson[] }>('/channel/search', { keyword: 'masked-read' });
    expect(found.body.data?.items.every((c) => !c.key.includes('secret'))).toBe(true);
  });

  it('when root reads a channel, then the key comes in full and the read is logged as an admin entry', async () => {
    const id = await create('root-read');
    expect((await read(root, id)).key).toBe(KEY);
    const logs = await eventually(
      async () =>
        (await root.get<{ items: LogJson[] }>('/log/', { type: '3', username: 'root', p: '1', page_size: '100' })).body
          .data?.items ?? [],
      (items) => items.some((l) => l.content.includes(`#${id}`)),
      10_000,
    );
    const entry = logs.find((l) => l.content.includes(`#${id}`));
    expect(entry).toMatchObject({ type: 3, username: 'root' });
    expect(entry?.content).not.toContain('secret');
  });

  it('when an admin saves the edit form with the masked key, then the stored key is kept; a new key replaces it', async () => {
    const id = await create('masked-save');
    const shown = await read(admin, id);
    const saved = await admin.put<ChannelJson>('/channel/', { id, name: 'masked-save', key: shown.key, priority: 2 });
    expect(saved.body).toMatchObject({ success: true });
    expect(saved.body.data?.key ?? '').not.toContain('secret');
    const after = await read(root, id);
    expect(after).toMatchObject({ key: KEY, priority: 2 });

    expect((await admin.put('/channel/', { id, key: 'sk-brand-new-key-1234' })).body).toMatchObject({ success: true });
    expect((await read(root, id)).key).toBe('sk-brand-new-key-1234');
  });

  it('when an admin copies a channel with the masked key, then the copy is refused instead of storing the mask', async () => {
    const id = await create('masked-copy');
    const shown = await read(admin, id);
    const copy = await admin.post('/channel/', {
      name: 'masked-copy_复制',
      type: 1,
      key: shown.key,
      models: 'gpt-4o-mini',
    });
    expect(copy.body).toMatchObject({ success: false, message: '密钥已隐藏，请重新填写渠道密钥' });
  });

  it('when a key is short, then an admin sees none of it', async () => {
    const id = await create('short-key', 'k-12345');
    expect((await read(admin, id)).key).not.toContain('12345');
    expect((await read(root, id)).key).toBe('k-12345');
  });
});
