/**
 * Dark mode in the browser walks: switching the console's theme, checking in the DOM that a page
 * is really dark and that its text stands out from what is behind it (WCAG contrast ratio), and
 * freezing the values that change from run to run (dates, the generated user name) so that a
 * logged-in page can be compared with a baseline picture.
 */
import type { Page } from 'playwright-core';

/** Lowest WCAG contrast ratio accepted for text (the ratio for large text and controls). */
export const MIN_CONTRAST = 3;

/** Chooses the console's theme (the navbar's toggle stores it under `arco-theme`); applied on the next load. */
export async function chooseTheme(page: Page, dark: boolean): Promise<void> {
  await page.evaluate((d) => localStorage.setItem('arco-theme', d ? 'dark' : 'light'), dark);
}

export interface Darkness {
  /** Whether body carries Arco's dark palette attribute. */
  attribute: boolean;
  /** Relative luminance (0 black .. 1 white) of the page background behind the main content. */
  background: number;
  /** Median relative luminance of the visible texts' colours, as drawn over their backgrounds. */
  text: number;
  /** Visible text elements checked. */
  checked: number;
  /** Texts whose contrast with their background is below the minimum. */
  low: string[];
}

/**
 * Runs in the page: the theme attribute, the background's luminance and, for every visible text
 * (a text node's element, or a filled input) outside disabled controls, the contrast ratio of
 * its colour against the backgrounds of its ancestors composited on the page's canvas colour.
 */
export function darkness(min: number): Darkness {
  type Rgba = [number, number, number, number];
  const parse = (c: string): Rgba | null => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = (m[1] ?? '')
      .split(/[\s,/]+/)
      .filter(Boolean)
      .map(Number);
    return [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0, p[3] ?? 1];
  };
  const over = (top: Rgba, base: [number, number, number]): [number, number, number] => [
    top[0] * top[3] + base[0] * (1 - top[3]),
    top[1] * top[3] + base[1] * (1 - top[3]),
    top[2] * top[3] + base[2] * (1 - top[3]),
  ];
  const lum = (c: [number, number, number]) => {
    const ch = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (ch[0] ?? 0) + 0.7152 * (ch[1] ?? 0) + 0.0722 * (ch[2] ?? 0);
  };
  const ratio = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const canvas: [number, number, number] = [255, 255, 255];
  /** The colour behind an element; null when a background picture makes it unknown. */
  const behind = (el: Element): [number, number, number] | null => {
    const layers: Rgba[] = [];
    for (let e: Element | null = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.backgroundImage !== 'none') return null;
      const c = parse(s.backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    let base = canvas;
    for (const layer of layers.reverse()) base = over(layer, base);
    return base;
  };
  const opacity = (el: Element) => {
    let o = 1;
    for (let e: Element | null = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const DISABLED =
    '[disabled], [aria-disabled="true"], .arco-btn-disabled, .arco-input-disabled, .arco-select-disabled, .arco-picker-disabled, .arco-checkbox-disabled, .arco-radio-disabled, .arco-pagination-item-disabled, .arco-menu-disabled, .arco-switch-disabled, svg';
  const describe = (el: Element, text: string) => {
    const cls = typeof el.className === 'string' ? el.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    return `${el.tagName.toLowerCase()}${cls ? `.${cls}` : ''} "${text.slice(0, 24)}"`;
  };

  const seen: number[] = [];
  const low: string[] = [];
  const texts: [Element, string][] = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      if (el.type !== 'hidden' && el.value.trim()) texts.push([el, el.value.trim()]);
      continue;
    }
    const own = [...el.childNodes]
      .filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent ?? '')
      .join('')
      .trim();
    if (own) texts.push([el, own]);
  }
  for (const [el, text] of texts) {
    if (el.closest(DISABLED)) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || !el.checkVisibility({ visibilityProperty: true, opacityProperty: true }))
      continue;
    const bg = behind(el);
    const fg = parse(getComputedStyle(el).color);
    if (!bg || !fg) continue;
    const drawn = over([fg[0], fg[1], fg[2], fg[3] * opacity(el)], bg);
    const l = lum(drawn);
    seen.push(l);
    const cr = ratio(l, lum(bg));
    if (cr < min) low.push(`${describe(el, text)} ${cr.toFixed(2)}:1`);
  }
  seen.sort((a, b) => a - b);
  const main = document.querySelector('main') ?? document.body;
  return {
    attribute: document.body.getAttribute('arco-theme') === 'dark',
    background: lum(behind(main) ?? canvas),
    text: seen[Math.floor(seen.length / 2)] ?? 0,
    checked: seen.length,
    low,
  };
}

/** Dates and times as the console writes them, each replaced by one fixed value of the same form. */
const DATES: [RegExp, string][] = [
  [/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/g, '2000-01-01 00:00:00'],
  [/\d{1,2}\/\d{1,2}\/\d{4}, \d{1,2}:\d{2}:\d{2} [AP]M/g, '1/1/2000, 00:00:00 AM'],
  [/\d{4}-\d{2}-\d{2}/g, '2000-01-01'],
  [/\d{2}-\d{2} \d{2}:\d{2}/g, '01-01 00:00'],
  // A log's time is written as a date over a time (two lines).
  [/\b\d{2}:\d{2}:\d{2}\b/g, '00:00:00'],
];

/**
 * Replaces what changes between runs in the page's texts: dates, and the given strings (a user
 * name made up by the test) by fixed stand-ins. Run after the values were checked; the page is
 * only looked at afterwards.
 */
export async function freeze(page: Page, replace: [string, string][]): Promise<void> {
  await page.evaluate(
    ({ dates, replace }) => {
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        let t = n.textContent ?? '';
        for (const [source, to] of dates) t = t.replace(new RegExp(source, 'g'), to);
        for (const [from, to] of replace) t = t.split(from).join(to);
        if (t !== n.textContent) n.textContent = t;
      }
    },
    { dates: DATES.map(([re, to]) => [re.source, to] as [string, string]), replace },
  );
}
