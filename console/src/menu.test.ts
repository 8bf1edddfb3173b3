// @vitest-environment node
import { describe, expect, it } from 'vitest';
import type { Status } from './api/types.ts';
import { buildMenu, chatNames, defaultCollapsed, type MenuEntry, selectedMenuKey } from './menu.ts';

const allFlags: Status = { enable_data_export: true, enable_drawing: true, enable_task: true };
const keys = (entries: MenuEntry[]) => entries.map((e) => e.key);

describe('buildMenu', () => {
  it('when the user is ordinary (role 1), then channel, redemption and user management are hidden', () => {
    const menu = buildMenu({ user: { role: 1 }, status: allFlags });
    expect(keys(menu)).toEqual([
      'playground',
      'pricing',
      'token',
      'topup',
      'log',
      'detail',
      'midjourney',
      'task',
      'setting',
    ]);
  });

  it('when nobody is logged in, then the admin entries are hidden too', () => {
    expect(keys(buildMenu({ user: null, status: {} }))).not.toContain('channel');
  });

  it('when the user is an admin (role 10), then every entry shows in the spec order', () => {
    const status: Status = { ...allFlags, chats: [{ A: 'https://a' }] };
    const menu = buildMenu({ user: { role: 10 }, status });
    expect(keys(menu)).toEqual([
      'playground',
      'pricing',
      'channel',
      'models',
      'chat',
      'token',
      'redemption',
      'topup',
      'user',
      'log',
      'detail',
      'midjourney',
      'task',
      'setting',
    ]);
    expect(menu.find((e) => e.key === 'channel')).toMatchObject({
      path: '/channel',
      name: 'menu.channel',
      icon: 'channel',
    });
  });

  it('when the status flags are off, then 数据看板, 绘图 and 异步任务 are hidden', () => {
    const menu = buildMenu({ user: { role: 100 }, status: { enable_data_export: false, enable_drawing: false } });
    expect(keys(menu)).not.toContain('detail');
    expect(keys(menu)).not.toContain('midjourney');
    expect(keys(menu)).not.toContain('task');
  });

  it('when only one flag is on, then only its entry shows', () => {
    expect(keys(buildMenu({ user: { role: 1 }, status: { enable_drawing: true } }))).toEqual([
      'playground',
      'pricing',
      'token',
      'topup',
      'log',
      'midjourney',
      'setting',
    ]);
    expect(keys(buildMenu({ user: { role: 1 }, status: { enable_task: true } }))).toContain('task');
    expect(keys(buildMenu({ user: { role: 1 }, status: { enable_data_export: true } }))).toContain('detail');
  });

  it('when exactly one chat is configured, then the chat entry links straight to /chat/0', () => {
    const menu = buildMenu({ user: { role: 1 }, status: { chats: [{ 'ChatGPT Next Web': 'https://x/?key={key}' }] } });
    const chat = menu.find((e) => e.key === 'chat');
    expect(chat).toMatchObject({ path: '/chat/0', name: 'menu.chat' });
    expect(chat?.children).toBeUndefined();
    expect(keys(menu).slice(0, 4)).toEqual(['playground', 'pricing', 'chat', 'token']);
  });

  it('when several chats are configured, then a submenu lists /chat/{index} by name', () => {
    const menu = buildMenu({ user: { role: 1 }, status: { chats: [{ Alpha: 'https://a' }, { Beta: 'https://b' }] } });
    const chat = menu.find((e) => e.key === 'chat');
    expect(chat?.path).toBeUndefined();
    expect(chat?.children).toEqual([
      { key: 'chat0', label: 'Alpha', path: '/chat/0' },
      { key: 'chat1', label: 'Beta', path: '/chat/1' },
    ]);
  });

  it('when no chat is configured or only chat_link is set, then there is no chat entry', () => {
    expect(keys(buildMenu({ user: { role: 1 }, status: {} }))).not.toContain('chat');
    expect(keys(buildMenu({ user: { role: 1 }, status: { chats: [] } }))).not.toContain('chat');
    expect(keys(buildMenu({ user: { role: 1 }, status: { chat_link: 'https://c', chats: [] } }))).not.toContain('chat');
  });

  it('when chats are malformed, then they are ignored', () => {
    expect(chatNames('nope')).toEqual([]);
    expect(chatNames([null, {}, { Ok: 'x' }])).toEqual(['Ok']);
  });
});

describe('defaultCollapsed', () => {
  it('collapses on mobile widths (<= 600 px) or when default_collapse_sidebar is on', () => {
    expect(defaultCollapsed(600, {})).toBe(true);
    expect(defaultCollapsed(375, {})).toBe(true);
    expect(defaultCollapsed(1280, {})).toBe(false);
    expect(defaultCollapsed(1280, { default_collapse_sidebar: true })).toBe(true);
  });
});

describe('selectedMenuKey', () => {
  const menu = buildMenu({ user: { role: 10 }, status: { chats: [{ A: 'a' }, { B: 'b' }] } });
  it('matches exact paths, sub-paths and chat children', () => {
    expect(selectedMenuKey('/token', menu)).toBe('token');
    expect(selectedMenuKey('/channel/edit/3', menu)).toBe('channel');
    expect(selectedMenuKey('/chat/1', menu)).toBe('chat1');
    expect(selectedMenuKey('/', menu)).toBeUndefined();
  });
});
