import { isPublicAddress } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { checkConsoleSetting, monitorsOf, panelsOf } from './console-panels.ts';

const fails = (key: Parameters<typeof checkConsoleSetting>[0], value: string) => {
  try {
    checkConsoleSetting(key, value);
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
};

describe('dashboard panel settings', () => {
  it('when a panel list is saved, then bad JSON, too many entries and missing or invalid fields are refused with the reason', () => {
    expect(fails('console_setting.faq', '')).toBeUndefined();
    expect(fails('console_setting.faq', '[{"question": "q", "answer": "a"}]')).toBeUndefined();
    expect(fails('console_setting.faq', '[{"question": "q"')).toBe('常见问答不是合法的 JSON');
    expect(fails('console_setting.faq', '{"question": "q"}')).toBe('常见问答必须是 JSON 数组');
    expect(fails('console_setting.faq', '[{"question": "q"}]')).toBe('第 1 条常见问答缺少答案（answer）');
    const many = JSON.stringify(
      Array.from({ length: 21 }, (_, i) => ({ categoryName: `c${i}`, url: 'https://k.example', slug: 's' })),
    );
    expect(fails('console_setting.uptime_kuma_groups', many)).toBe('Uptime Kuma 分组最多 20 条，当前 21 条');
    expect(
      fails('console_setting.uptime_kuma_groups', '[{"categoryName": "a", "url": "https://k.example", "slug": "x/y"}]'),
    ).toBe('第 1 条Uptime Kuma 分组的 Slug 只能含字母、数字、下划线和连字符');
    expect(
      fails('console_setting.api_info', '[{"url": "ftp://x", "route": "r", "description": "d", "color": "blue"}]'),
    ).toBe('第 1 条API 信息的 URL 必须以 http:// 或 https:// 开头');
    expect(
      fails(
        'console_setting.api_info',
        '[{"url": "https://x.example", "route": "r", "description": "d", "color": "beige"}]',
      ),
    ).toContain('颜色不在可选范围内');
    expect(
      fails(
        'console_setting.announcements',
        '[{"content": "<script>alert(1)</script>", "publishDate": "2025-01-01T00:00:00Z"}]',
      ),
    ).toContain('不允许的内容');
    expect(fails('console_setting.announcements', '[{"content": "hi", "publishDate": "yesterday"}]')).toContain(
      'RFC 3339',
    );
  });

  it('when the panels are read, then announcements come newest first and a panel switched off shows nothing', () => {
    const values: Record<string, string> = {
      'console_setting.announcements': JSON.stringify([
        { content: 'old', publishDate: '2025-01-01T00:00:00Z' },
        { content: 'new', publishDate: '2025-06-01T00:00:00Z' },
      ]),
      'console_setting.faq': '[{"question": "q", "answer": "a"}]',
      'console_setting.announcements_enabled': 'true',
      'console_setting.faq_enabled': 'false',
    };
    const p = panelsOf({ text: (k) => values[k] ?? '', bool: (k) => values[k] === 'true' });
    expect(p.announcements.map((a) => a.content)).toEqual(['new', 'old']);
    expect(p.faq_enabled).toBe(false);
    expect(p.faq).toEqual([]);
  });

  it("when Uptime Kuma's status page and heartbeats are read, then each monitor has its group, 24 h uptime and latest status", () => {
    const page = {
      publicGroupList: [
        {
          id: 1,
          name: 'API',
          monitorList: [
            { id: 3, name: 'OpenAI' },
            { id: 4, name: 'Claude' },
          ],
        },
      ],
    };
    const beats = {
      heartbeatList: { '3': [{ status: 0 }, { status: 1 }], '4': [{ status: 1 }, { status: 0 }] },
      uptimeList: { '3_24': 0.998, '4_24': 0.5, '4_720': 0.9 },
    };
    expect(monitorsOf(page, beats)).toEqual([
      { name: 'OpenAI', uptime: 0.998, status: 1, group: 'API' },
      { name: 'Claude', uptime: 0.5, status: 0, group: 'API' },
    ]);
    expect(monitorsOf({}, {})).toEqual([]);
  });

  it('when an address is judged, then loopback, private, link-local and mapped private ones are not public', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '192.168.1.1', '::1', '::ffff:10.0.0.1', 'fd00::1'])
      expect(isPublicAddress(a), a).toBe(false);
    for (const a of ['8.8.8.8', '2606:4700::1111']) expect(isPublicAddress(a), a).toBe(true);
  });
});
