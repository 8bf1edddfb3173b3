// @vitest-environment node
// Sanitizing needs a real DOM (happy-dom's parser leaves scripts in place): the console's browser
// test (console/e2e/content.test.ts) checks it in Chromium. Here: Markdown, frames, fingerprints.
import { describe, expect, it } from 'vitest';
import { fingerprint } from './fingerprint.ts';
import { frameUrl, markdownToHtml, sanitizeHtml } from './rich-content.ts';

describe('rich content', () => {
  it('when the text is Markdown, then it becomes HTML with headings, emphasis, lists and line breaks', () => {
    const html = markdownToHtml('# 关于我们\n\n**加粗** 与 *斜体*\n第二行\n\n- 一\n- 二');
    expect(html).toContain('<h1>关于我们</h1>');
    expect(html).toContain('<strong>加粗</strong>');
    expect(html).toContain('<em>斜体</em>');
    expect(html).toContain('<br>');
    expect(html).toMatch(/<li>一<\/li>\s*<li>二<\/li>/);
  });

  it('when no DOM can sanitize, then the markup is escaped instead of passed through', () => {
    expect(sanitizeHtml('<img src=x onerror="alert(1)">')).toBe('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
  });

  it('when the whole text is one web address, then it is shown in a frame; otherwise not', () => {
    expect(frameUrl('  https://example.com/about?x=1 \n')).toBe('https://example.com/about?x=1');
    expect(frameUrl('see https://example.com')).toBeUndefined();
    expect(frameUrl('javascript:alert(1)')).toBeUndefined();
    expect(frameUrl('# https://example.com')).toBeUndefined();
  });

  it('when a text changes, then its fingerprint changes; the same text gives the same one', () => {
    expect(fingerprint('公告 A')).toBe(fingerprint('公告 A'));
    expect(fingerprint('公告 A')).not.toBe(fingerprint('公告 B'));
    expect(fingerprint('')).toMatch(/^[0-9a-f]{8}$/);
  });
});
