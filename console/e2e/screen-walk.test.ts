/**
 * What the route table's pages show (issue 14, item 7), as an anonymous visitor, as a newly
 * registered user and as root, at 1440 px and at 390 px, each in the light and the dark theme: on
 * each page the values the test stored or caused are on the screen, compared with what the API
 * answers (the wallet balance, a token's name and quota, a log's model, token and cost, the
 * dashboard's requests and tokens, a channel, a redemption code, a user, the audio prices of the
 * pricing page, the About text). Every page is also checked in the DOM, in both themes: body
 * carries Arco's dark palette only in the dark theme, the page is dark with light text (or light
 * with dark text), and no visible text is below a WCAG contrast of 3:1 against what is behind it
 * (dark-support.ts). Every visit also checks the layout (layout-support.ts): nothing sticks out of
 * the viewport sideways and nothing covers a control; root then visits the rest of the route table
 * at 1440 px, 390 px and in the dark theme for the same check (one walk: the layout walk of its own
 * repeated the logins and half of these visits on a stack and a browser of its own).
 *
 * Screenshots are compared pixel by pixel with the baselines in console/e2e/baselines
 * (pixelmatch, at most 0.2 % of the pixels differing): the visitor's pages (login, register,
 * about, pricing) in both themes, and every logged-in page in the dark theme, after the dates and
 * the made-up user name are replaced by fixed stand-ins and boxes whose content changes (date
 * pickers, RPM and TPM, the invitation link) are painted over. E2E_UPDATE_BASELINES=1 writes them
 * anew (with the Chinese font of deploy/local/bin/setup.sh, fonts-wqy-microhei, installed); every
 * screenshot of the walk is also written to E2E_SCREENSHOTS when set.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, routable, setOption } from '@aigw/testkit/harness';
import pixelmatch from 'pixelmatch';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseTheme, type Darkness, darkness, freeze, MIN_CONTRAST } from './dark-support.ts';
import { inspect, ROOT_ROUTES } from './layout-support.ts';
import { type Harness, login, startHarness, toast } from './money-support.ts';

const BASELINES = resolve(import.meta.dirname, 'baselines');
/** Share of pixels that may differ from a baseline (antialiasing of text on another run). */
const MAX_DIFF = 0.002;
const WIDTHS = [
  { name: '1440', width: 1440, height: 900, dark: false },
  { name: '390', width: 390, height: 844, dark: false },
  { name: 'dark-1440', width: 1440, height: 900, dark: true },
  { name: 'dark-390', width: 390, height: 844, dark: true },
] as const;
type Mode = (typeof WIDTHS)[number];

const MODEL = 'walk-model';
const AUDIO_MODEL = 'gpt-4o-audio-preview';
const ABOUT = 'Walk about text: the gateway of the walk.';

interface Json {
  success: boolean;
  message?: string;
  data?: unknown;
}

/** The console's API from inside the page (its session cookie and user header). */
function api<T>(page: Page, method: string, path: string, body?: unknown): Promise<T & Json> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const id = JSON.parse(localStorage.getItem('user') ?? '{}').id ?? 0;
      const res = await fetch(path, {
        method,
        headers: { 'Content-Type': 'application/json', 'New-Api-User': String(id) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return res.json();
    },
    { method, path, body },
  ) as Promise<T & Json>;
}

/** Layout findings of a walk's visits ("<width>[-dark] <route>" -> what sticks out or is covered). */
type Layout = Record<string, string[]>;

/** Contexts whose pages count their fetches in flight (see settled). */
const counting = new WeakSet<object>();

/**
 * Waits until the page has no fetch in flight for 100 ms and no finite CSS transition or animation
 * running (spinners loop forever and are left out). Faster than networkidle's fixed 500 ms of
 * silence plus a fixed wait for Arco's transitions, on each of the walk's ~90 visits.
 */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const w = window as unknown as { __inflight?: number; __quietAt?: number };
      const quiet = (w.__inflight ?? 0) === 0 && performance.now() - (w.__quietAt ?? 0) > 100;
      const moving = document
        .getAnimations()
        .some((a) => a.playState === 'running' && a.effect?.getTiming().iterations !== Number.POSITIVE_INFINITY);
      // A page's code still loading (the layout's Suspense fallback) is not a page yet.
      const loading = document.querySelector('.aigw-page-loading') !== null;
      return quiet && !moving && !loading;
    },
    undefined,
    { polling: 50, timeout: 15_000 },
  );
}

/** Pages whose next visit loads the document: a theme was chosen since (applied on load). */
const reload = new WeakSet<Page>();

/** Sets the viewport and the theme of a walk's mode; the next visit loads the document with them. */
async function mode(page: Page, w: Mode): Promise<void> {
  await page.setViewportSize({ width: w.width, height: w.height });
  if (page.url().startsWith('http')) await chooseTheme(page, w.dark);
  reload.add(page);
}

/**
 * Goes to a route inside the loaded console, as its menu does (react-router follows the history
 * entry on popstate): the app is not fetched, parsed and booted again for each of the walk's ~120
 * visits, about half of each visit's time (more on a busy machine). The page starts at its top, as
 * a loaded one does. The quiet period of settled() starts now, before the route's fetches.
 */
function navigateInApp(to: string): void {
  const w = window as unknown as { __quietAt: number };
  w.__quietAt = performance.now();
  window.scrollTo(0, 0);
  const idx = ((history.state as { idx?: number } | null)?.idx ?? 0) + 1;
  history.pushState({ usr: null, key: Math.random().toString(36).slice(2, 10), idx }, '', to);
  window.dispatchEvent(new PopStateEvent('popstate', { state: history.state }));
}

/**
 * Opens a route (loading the document on a fresh page or after mode(), going there inside the app
 * otherwise), lets it settle and checks its layout (layout-support.ts) on the way.
 */
async function open(page: Page, route: string, layout: Layout): Promise<void> {
  const context = page.context();
  if (!counting.has(context)) {
    counting.add(context);
    await context.addInitScript(() => {
      const w = window as unknown as { __inflight: number; __quietAt: number };
      w.__inflight = 0;
      w.__quietAt = performance.now();
      const real = window.fetch.bind(window);
      window.fetch = (...args: Parameters<typeof fetch>) => {
        w.__inflight++;
        return real(...args).finally(() => {
          w.__inflight--;
          w.__quietAt = performance.now();
        });
      };
    });
  }
  // The counter is in every document the context loads from here on (this one included).
  if (reload.has(page) || !page.url().startsWith('http')) {
    reload.delete(page);
    await page.goto(route);
  } else {
    await page.evaluate(navigateInApp, route);
  }
  await settled(page);
  const findings = await page.evaluate(inspect);
  if (findings.length) {
    const dark = await page.evaluate(() => document.body.getAttribute('arco-theme') === 'dark');
    layout[`${page.viewportSize()?.width}${dark ? '-dark' : ''} ${route}`] = findings.map(
      (f) => `${f.kind}: ${f.what}${f.by ? ` under ${f.by}` : ''}`,
    );
  }
}

/**
 * A text on the screen: scrolled to (the table scrolls sideways on a phone), inside the viewport,
 * and at its centre the element itself, not something covering it (a fixed column, a drawer).
 */
async function shows(page: Page, text: string, where = 'body', exact = false): Promise<void> {
  const el = page.locator(where).getByText(text, { exact }).first();
  await el.waitFor({ state: 'visible', timeout: 15_000 });
  await el.scrollIntoViewIfNeeded();
  const seen = await el.evaluate((node) => {
    const r = node.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) return `outside the viewport at ${x},${y}`;
    const hit = document.elementFromPoint(x, y);
    // The element, a part of it, or the box it sits in (an inline text's centre can fall between
    // its lines); anything else (a fixed column, a drawer) covers it.
    if (!hit || !(hit === node || node.contains(hit) || hit.contains(node)))
      return `covered by ${hit?.className ?? 'nothing'}`;
    return 'shown';
  });
  expect(seen, `"${text}" in ${where}`).toBe('shown');
}

/** A screenshot; `masks` are boxes painted over (inputs holding today's date, say). */
async function shot(page: Page, name: string, masks: string[] = []): Promise<Buffer> {
  const png = await page.screenshot({
    animations: 'disabled',
    caret: 'hide',
    mask: masks.map((m) => page.locator(m)),
    maskColor: '#808080',
  });
  const dir = process.env.E2E_SCREENSHOTS;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.png`), png);
  }
  return png;
}

/** Share of differing pixels between a screenshot and its baseline (1 when the sizes differ). */
function diffShare(a: Buffer, b: Buffer): number {
  const x = PNG.sync.read(a);
  const y = PNG.sync.read(b);
  if (x.width !== y.width || x.height !== y.height) return 1;
  const differing = pixelmatch(x.data, y.data, undefined, x.width, x.height, { threshold: 0.1 });
  return differing / (x.width * x.height);
}

/** Compares with the stored baseline (or stores it when asked to). */
function againstBaseline(name: string, png: Buffer): number {
  const file = join(BASELINES, `${name}.png`);
  if (process.env.E2E_UPDATE_BASELINES === '1') {
    mkdirSync(BASELINES, { recursive: true });
    writeFileSync(file, png);
    return 0;
  }
  if (!existsSync(file)) throw new Error(`no baseline ${file} (E2E_UPDATE_BASELINES=1 writes it)`);
  return diffShare(png, readFileSync(file));
}

/**
 * Body carries the dark palette in dark mode only, the page behind the content is dark with light
 * texts (light with dark texts in light mode), and in either theme no text is below the contrast
 * minimum against what is behind it (found[where] lists what is wrong).
 */
async function themeChecked(page: Page, dark: boolean, where: string, found: Record<string, string[]>): Promise<void> {
  const d: Darkness = await page.evaluate(darkness, MIN_CONTRAST);
  const problems: string[] = [];
  if (d.attribute !== dark) problems.push(`arco-theme="dark" on body: ${d.attribute}`);
  if (dark ? d.background > 0.05 : d.background < 0.5) problems.push(`background luminance ${d.background.toFixed(3)}`);
  if (d.checked < 5 || (dark ? d.text < 0.3 : d.text > 0.3))
    problems.push(`median text luminance ${d.text.toFixed(3)} over ${d.checked} texts`);
  problems.push(...d.low);
  if (problems.length) found[where] = problems;
}

/** Where the mouse rests before a screenshot (a hovered row or button would change the picture). */
async function restMouse(page: Page, w: Mode): Promise<void> {
  await page.mouse.move(w.width - 2, w.height - 2);
}

describe('screen walk (browser)', () => {
  let h: Harness;
  let s: RelayStack;
  let fake: FakeProvider;
  let quotaPerUnit = 500_000;
  /** Dollars as the console shows them. */
  const dollars = (quota: number, digits: number) => `$${(quota / quotaPerUnit).toFixed(digits)}`;

  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'logs', 'relay', 'tasks', 'gateway']);
    s = clientsFor(h.stack);
    fake = await startFakeProvider({ kind: 'openai', key: 'k', reply: 'one two three four', promptTokens: 12 });
    await setOption(s, 'ModelRatio', JSON.stringify({ [MODEL]: 2.5, [AUDIO_MODEL]: 1.25 }));
    await setOption(s, 'About', ABOUT);
    await createChannel(s, {
      type: 1,
      baseUrl: fake.url,
      key: 'k',
      models: `${MODEL},${AUDIO_MODEL}`,
      name: 'walk-channel',
    });
    const status = (await (await fetch(`${h.stack.gatewayUrl}/api/status`)).json()) as {
      data: { quota_per_unit?: number };
    };
    quotaPerUnit = status.data.quota_per_unit || 500_000;
  });
  afterAll(async () => {
    await fake?.close();
    await h?.close();
  });

  // The visitor's walk and the user's walk run side by side on the one stack and browser, each in
  // contexts of its own: they spend most of their time waiting on the stack's answers and the
  // browser's rendering (about a third of a core alone). The root walk comes after them: its visits
  // add entries to root's log, which the user's walk compares with a baseline.
  it.concurrent('when a visitor looks around, then the pages show the About text, the models with their audio prices, and the account forms; the still pages match their baselines', async () => {
    const layout: Layout = {};
    const pricing = (await (await fetch(`${h.stack.gatewayUrl}/api/pricing`)).json()) as {
      data: { model_name: string; model_ratio: number; audio_ratio: number; audio_completion_ratio: number }[];
    };
    await eventually(
      async () => (await (await fetch(`${h.stack.gatewayUrl}/api/pricing`)).json()) as typeof pricing,
      (p) => p.data.some((m) => m.model_name === AUDIO_MODEL),
    );
    const audio = ((await (await fetch(`${h.stack.gatewayUrl}/api/pricing`)).json()) as typeof pricing).data.find(
      (m) => m.model_name === AUDIO_MODEL,
    );
    expect(audio?.audio_ratio).toBeGreaterThan(0);
    const audioIn = (audio?.model_ratio ?? 0) * 2 * (audio?.audio_ratio ?? 0);
    const audioOut = audioIn * (audio?.audio_completion_ratio ?? 0);

    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    const diffs: Record<string, number> = {};
    const themes: Record<string, string[]> = {};
    for (const w of WIDTHS) {
      await mode(page, w);
      await open(page, '/about', layout);
      await shows(page, ABOUT);
      await themeChecked(page, w.dark, `visitor-about-${w.name}`, themes);
      diffs[`visitor-about-${w.name}`] = againstBaseline(
        `visitor-about-${w.name}`,
        await shot(page, `visitor-about-${w.name}`),
      );

      // The picture first: looking for a text scrolls the table on a phone.
      await open(page, '/pricing', layout);
      await page.getByText(MODEL).first().waitFor({ state: 'visible' });
      diffs[`visitor-pricing-${w.name}`] = againstBaseline(
        `visitor-pricing-${w.name}`,
        await shot(page, `visitor-pricing-${w.name}`),
      );
      await shows(page, MODEL);
      await shows(page, `音频提示 $${audioIn.toFixed(4)} / 1M tokens`);
      await shows(page, `音频补全 $${audioOut.toFixed(4)} / 1M tokens`);
      await themeChecked(page, w.dark, `visitor-pricing-${w.name}`, themes);

      await open(page, '/login', layout);
      await page.locator('input[name="username"]').waitFor({ state: 'visible' });
      await page.locator('input[name="password"]').waitFor({ state: 'visible' });
      await themeChecked(page, w.dark, `visitor-login-${w.name}`, themes);
      diffs[`visitor-login-${w.name}`] = againstBaseline(
        `visitor-login-${w.name}`,
        await shot(page, `visitor-login-${w.name}`),
      );

      await open(page, '/register', layout);
      await page.locator('input[name="password2"]').waitFor({ state: 'visible' });
      await themeChecked(page, w.dark, `visitor-register-${w.name}`, themes);
      diffs[`visitor-register-${w.name}`] = againstBaseline(
        `visitor-register-${w.name}`,
        await shot(page, `visitor-register-${w.name}`),
      );

      // A login-guarded page sends the visitor to the login page.
      await open(page, '/token', layout);
      await page.waitForURL('**/login**');
    }
    // The same page twice in a row is the same picture (the comparison itself is stable).
    await open(page, '/login', layout);
    expect(diffShare(await shot(page, 'again-1'), await shot(page, 'again-2'))).toBe(0);
    await context.close();
    expect(themes).toEqual({});
    expect(layout).toEqual({});
    expect(Object.entries(diffs).filter(([, d]) => d > MAX_DIFF)).toEqual([]);
  });

  it.concurrent('when a new user registers, makes a token, redeems a code and sends a request, then token, wallet, log, dashboard and settings pages show those values at 1440 px and 390 px, light and dark; the dark pages match their baselines', async () => {
    const layout: Layout = {};
    const username = `walk${Date.now().toString(36).slice(-6)}`;
    const root = await h.fresh();
    await login(root.page, 'root', '123456');
    const codes = await api<{ data: string[] }>(root.page, 'POST', '/api/redemption/', {
      name: 'walk-code',
      quota: 400_000,
      count: 1,
    });
    expect(codes.success).toBe(true);

    // Registration through the page.
    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/register');
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="password"]').fill('password123');
    await page.locator('input[name="password2"]').fill('password123');
    await page.locator('main form button[type="submit"]').click();
    await page.waitForURL('**/login');
    await login(page, username, 'password123');

    // A token through the drawer; its key from the copy button.
    await page.getByRole('button', { name: '添加令牌' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.locator('input[name="token-name"]').fill('walk-token');
    await drawer.getByRole('button', { name: '10$' }).click();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '1 个令牌创建成功').waitFor();
    const row = page.locator('tr', { hasText: 'walk-token' });
    await row.getByRole('button', { name: '复制' }).click();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toMatch(/^sk-/);

    const redeemed = await api(page, 'POST', '/api/user/topup', { key: codes.data[0] });
    expect(redeemed.success).toBe(true);
    await routable(h.stack.relayUrl, key, MODEL);
    const reply = await fetch(`${h.stack.relayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'walk' }] }),
    });
    expect(reply.status).toBe(200);
    await reply.text();

    // What the API says, to compare with the screen.
    type Log = {
      model_name: string;
      token_name: string;
      quota: number;
      prompt_tokens: number;
      completion_tokens: number;
    };
    const logs = await eventually(
      () => api<{ data: { items: Log[] } }>(page, 'GET', '/api/log/self/?p=1&page_size=10&type=2'),
      (r) => (r.data?.items.length ?? 0) === 1,
    );
    const log = logs.data.items[0] as Log;
    expect(log).toMatchObject({ model_name: MODEL, token_name: 'walk-token' });
    expect(log.quota).toBeGreaterThan(0);
    const self = await eventually(
      () => api<{ data: { quota: number } }>(page, 'GET', '/api/user/self'),
      (r) => r.data.quota === 400_000 - log.quota,
    );
    const tokens = await api<{ data: { items: { name: string; remain_quota: number }[] } }>(
      page,
      'GET',
      '/api/token/?p=1&size=10',
    );
    const token = tokens.data.items.find((t) => t.name === 'walk-token');
    expect(token).toBeDefined();

    // Every page is checked for its theme and its texts' contrast; light pages are then only
    // written to E2E_SCREENSHOTS, dark ones compared with baselines once dates and the made-up
    // user name are frozen.
    const diffs: Record<string, number> = {};
    const themes: Record<string, string[]> = {};
    const frozen: [string, string][] = [[username, 'walk000000']];
    const still = async (p: Page, w: Mode, name: string, masks: string[] = []) => {
      await themeChecked(p, w.dark, `${name}-${w.name}`, themes);
      if (!w.dark) {
        await shot(p, `${name}-${w.name}`);
        return;
      }
      await freeze(p, frozen);
      await restMouse(p, w);
      diffs[`${name}-${w.name}`] = againstBaseline(`${name}-${w.name}`, await shot(p, `${name}-${w.name}`, masks));
    };
    for (const w of WIDTHS) {
      await mode(page, w);
      await open(page, '/token', layout);
      const tokenRow = page.locator('tr', { hasText: 'walk-token' });
      await tokenRow.waitFor({ state: 'visible' });
      await shows(page, dollars(token?.remain_quota ?? 0, 2), 'tr:has-text("walk-token")');
      await still(page, w, 'user-token');

      await open(page, '/topup', layout);
      await shows(page, dollars(self.data.quota, 6), '.aigw-wallet-balance');
      await still(page, w, 'user-topup');

      await open(page, '/log', layout);
      const logRow = page.locator('.arco-table-tr', { hasText: 'walk-token' }).first();
      await logRow.waitFor({ state: 'visible' });
      await shows(page, MODEL, '.arco-table-tr:has-text("walk-token")');
      await shows(page, dollars(log.quota, 6), '.arco-table-tr:has-text("walk-token")');
      // The cell itself: a loose match can land on the time cell ("12" in 12:04), which scrolls
      // the phone's table elsewhere and changes the screenshot with the hour.
      await shows(page, String(log.prompt_tokens), '.arco-table-tr:has-text("walk-token")', true);
      if (w.name === '1440') {
        // The whole row is on the screen: model, cost and details need no sideways scrolling.
        const inside = await logRow.evaluate((el) => {
          const table = el.closest('.arco-table-content-inner, .arco-table-body') ?? el.parentElement;
          return (table?.scrollWidth ?? 0) <= (table?.clientWidth ?? 0) + 1;
        });
        expect(inside, 'log table needs no sideways scroll at 1440 px').toBe(true);
      }
      // RPM and TPM count the last minute; the range picker holds today's date.
      await still(page, w, 'user-log', ['.aigw-log-stat b', '.arco-picker']);

      await open(page, '/detail', layout);
      await shows(page, String(log.prompt_tokens + log.completion_tokens), '.aigw-detail-totals');
      await shows(page, dollars(log.quota, 2), '.aigw-detail-totals');
      await still(page, w, 'user-detail', ['.arco-picker']);

      await open(page, '/setting', layout);
      await shows(page, username, '[data-card="profile"]');
      // The invitation link holds the stack's port and a random code; the login sessions their times.
      await still(page, w, 'user-setting', ['input', '.aigw-session-meta']);

      await open(page, '/pricing', layout);
      await shows(page, MODEL);
    }
    await context.close();

    // Root sees the user, the log with its user, the channel and the code.
    for (const w of WIDTHS) {
      await mode(root.page, w);
      await open(root.page, '/user', layout);
      await shows(root.page, username);
      await still(root.page, w, 'root-user');

      await open(root.page, `/log`, layout);
      const adminRow = root.page.locator('.arco-table-tr', { hasText: username }).first();
      await adminRow.waitFor({ state: 'visible' });
      await shows(root.page, MODEL, `.arco-table-tr:has-text("${username}")`);
      await shows(root.page, dollars(log.quota, 6), `.arco-table-tr:has-text("${username}")`);
      await still(root.page, w, 'root-log', ['.aigw-log-stat b', '.arco-picker']);

      await open(root.page, '/channel', layout);
      await shows(root.page, 'walk-channel');
      await shows(root.page, '已启用', 'tr:has-text("walk-channel")');
      await still(root.page, w, 'root-channel');

      await open(root.page, '/redemption', layout);
      await shows(root.page, 'walk-code');
      await still(root.page, w, 'root-redemption');
    }
    await root.context.close();
    expect(themes).toEqual({});
    expect(layout).toEqual({});
    expect(Object.entries(diffs).filter(([, d]) => d > MAX_DIFF)).toEqual([]);
  }, 180_000); // Four walks of ten pages each: about 70 s on a busy machine.

  it('when root visits the rest of the route table at 1440 px, 390 px and in dark mode, then nothing sticks out sideways or covers a control', async () => {
    const layout: Layout = {};
    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await login(page, 'root', '123456');
    // The routes the walk above visits as root already had their layout checked there.
    const seen = new Set(['/user', '/log', '/channel', '/redemption']);
    for (const w of [WIDTHS[0], WIDTHS[1], WIDTHS[2]]) {
      await mode(page, w);
      for (const route of ROOT_ROUTES.filter((r) => !seen.has(r))) await open(page, route, layout);
    }
    // The check itself sees a control under a cover and a box wider than the screen. (The About
    // text also shows that the visits inside the app reached their routes.)
    await open(page, '/about', layout);
    await shows(page, ABOUT);
    await page.evaluate(() => {
      const cover = document.createElement('div');
      cover.style.cssText = 'position:fixed;inset:0;z-index:9999';
      const wide = document.createElement('div');
      wide.style.cssText = 'width:3000px;height:4px';
      document.body.append(cover, wide);
    });
    const planted = await page.evaluate(inspect);
    expect(planted.some((f) => f.kind === 'covered')).toBe(true);
    expect(planted.some((f) => f.kind === 'overflow')).toBe(true);
    await context.close();
    expect(layout).toEqual({});
  });
});
