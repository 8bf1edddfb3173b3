/**
 * Accounts in a real browser: headless Chromium against the console served by a gateway, with the
 * users, channels and billing services behind it on the real servers.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '@aigw/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../../deploy/local/stack/in-process.ts';
import { launchBrowser } from '../test/browser/launch.ts';

const CONSOLE_ROOT = resolve(import.meta.dirname, '..');

/** A fresh build of the console (or E2E_CONSOLE_DIR when the caller built one). */
function consoleBuild(): string {
  const given = process.env.E2E_CONSOLE_DIR;
  if (given && existsSync(join(given, 'index.html'))) return given;
  const out = mkdtempSync(join(tmpdir(), 'aigw-console-'));
  execFileSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: CONSOLE_ROOT,
    stdio: 'inherit',
  });
  return out;
}

/** An authenticator app (RFC 6238, SHA-1, six digits), apart from the service's code. */
function authenticatorCode(secret: string, step: number): string {
  let bits = '';
  for (const ch of secret) bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  return String((mac.readUInt32BE(mac[19]! & 0xf) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

let seq = 0;
const uniqueName = () => `e2e${Date.now().toString(36).slice(-5)}${seq++}`;

describe('console accounts (browser)', () => {
  let stack: Stack;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    const dir = consoleBuild();
    stack = await startStack({ services: ['users', 'channels', 'billing', 'gateway'], env: { CONSOLE_DIR: dir } });
    url = stack.gatewayUrl;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A page in its own browser context (own cookies and localStorage), addressed like a client of its own. */
  async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      baseURL: url,
      extraHTTPHeaders: { 'X-Forwarded-For': `10.9.${seq % 250}.${(seq++ % 250) + 1}` },
    });
    return { context, page: await context.newPage() };
  }

  const toast = (page: Page, text: string) => page.locator('.arco-message').filter({ hasText: text }).first();

  /** The page's form submit button (the top bar has login and register buttons too). */
  const submit = (page: Page) => page.locator('main form button[type="submit"]').click();

  async function login(page: Page, username: string, password: string) {
    await page.goto('/login');
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="password"]').fill(password);
    await submit(page);
  }

  it('when a visitor registers, logs in, changes the password and logs in again, then each step works', async () => {
    const { context, page } = await freshPage();
    const username = uniqueName();
    await page.goto('/register?aff=NOPE42');
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="password"]').fill('short');
    await page.locator('input[name="password2"]').fill('short');
    await submit(page);
    await expect(toast(page, '密码长度不得小于 8 位！').waitFor()).resolves.toBeUndefined();
    await page.locator('input[name="password"]').fill('password123');
    await page.locator('input[name="password2"]').fill('password124');
    await submit(page);
    await toast(page, '两次输入的密码不一致').waitFor();
    await page.locator('input[name="password2"]').fill('password123');
    await submit(page);
    await page.waitForURL('**/login');
    await toast(page, '注册成功！').waitFor();
    expect(await page.evaluate(() => localStorage.getItem('aff'))).toBe('NOPE42');

    await login(page, username, 'password123');
    await page.waitForURL('**/token');
    expect(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').username)).toBe(username);

    await page.goto('/setting');
    const profile = page.locator('[data-card="profile"]');
    await expect(profile.getByText(username, { exact: true }).waitFor()).resolves.toBeUndefined();
    await expect(page.locator('[data-card="invite"] input').inputValue()).resolves.toMatch(
      /\/register\?aff=[A-Za-z0-9]{6}$/,
    );
    await expect(page.getByRole('tab', { name: '系统设置' }).count()).resolves.toBe(0);

    await page.getByRole('button', { name: '修改密码' }).click();
    await page.locator('input[name="original_password"]').fill('password123');
    await page.locator('input[name="new_password"]').fill('newpassword9');
    await page.locator('input[name="new_password2"]').fill('newpassword8');
    await page.locator('.arco-modal').getByRole('button', { name: '确定' }).click();
    await toast(page, '两次输入的密码不一致！').waitFor();
    await page.locator('input[name="new_password2"]').fill('newpassword9');
    await page.locator('.arco-modal').getByRole('button', { name: '确定' }).click();
    await toast(page, '密码修改成功！').waitFor();

    await page.locator('.aigw-user').hover();
    await page.getByRole('menuitem', { name: '退出' }).click();
    await page.waitForURL('**/login');

    await login(page, username, 'password123');
    await toast(page, '用户名或密码错误，或用户已被封禁').waitFor();
    await login(page, username, 'newpassword9');
    await page.waitForURL('**/token');
    await context.close();
  });

  it('when root saves a setting, then /api/status shows it, and saving again unchanged says so', async () => {
    const { context, page } = await freshPage();
    await login(page, 'root', '123456');
    await page.locator('.arco-modal').getByText('您正在使用默认密码！').waitFor();
    await page
      .locator('.arco-modal')
      .getByRole('button', { name: /确定|知道了|OK/ })
      .click();
    await page.waitForURL('**/token');

    await page.goto('/setting?tab=other');
    const section = page.locator('[data-section="system-name"]');
    await section.locator('input').fill('E2E 网关');
    await section.getByRole('button', { name: '保存设置系统名称' }).click();
    await toast(page, '保存成功').waitFor();
    const status = (await (await fetch(`${url}/api/status`)).json()) as { data: { system_name: string } };
    expect(status.data.system_name).toBe('E2E 网关');
    await page.waitForFunction(() => document.title === 'E2E 网关');

    await section.getByRole('button', { name: '保存设置系统名称' }).click();
    await toast(page, '你似乎并没有修改什么').waitFor();

    await page.goto('/setting?tab=operation');
    const ratio = page.locator('[data-section="ratio"]');
    await ratio.locator('[data-option="GroupRatio"] textarea').fill('{bad json');
    await ratio.getByRole('button', { name: '保存倍率设置' }).click();
    await toast(page, '请检查输入').waitFor();

    await page.goto('/setting?tab=system');
    await page.locator('[data-option="PasswordLoginEnabled"] button[role="switch"]').click();
    await page.locator('.arco-modal').getByText('包括管理员').waitFor();
    await page.locator('.arco-modal').getByRole('button', { name: '取消' }).click();
    const after = (await (await fetch(`${url}/api/status`)).json()) as { data: { password_login_enabled: boolean } };
    expect(after.data.password_login_enabled).toBe(true);
    await context.close();
  });

  it('when root opens user management, then users are listed with role and status labels and can be disabled', async () => {
    const { context, page } = await freshPage();
    const name = uniqueName();
    await fetch(`${url}/api/user/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '10.8.0.1' },
      body: JSON.stringify({ username: name, password: 'password123', password2: 'password123' }),
    });
    await login(page, 'root', '123456');
    await page
      .locator('.arco-modal')
      .getByRole('button', { name: /确定|知道了|OK/ })
      .click();
    await page.goto('/user');
    await page.getByText('管理用户').first().waitFor();
    await page.locator('input[name="keyword"]').fill(name);
    await page.getByRole('button', { name: '查询' }).click();
    const row = page.locator('tr').filter({ hasText: name });
    await row.getByText('普通用户').waitFor();
    await row.getByText('已激活').waitFor();
    await row.getByRole('button', { name: '禁用' }).click();
    await toast(page, '操作成功完成！').waitFor();
    await row.getByText('已封禁').waitFor();
    await context.close();
  });

  it('when an ordinary user looks around, then admin entries are hidden and admin pages send the user home', async () => {
    const { context, page } = await freshPage();
    await page.goto('/setting');
    await page.waitForURL('**/login');

    const username = uniqueName();
    await page.goto('/register');
    await page.locator('input[name="username"]').fill(username);
    await page.locator('input[name="password"]').fill('password123');
    await page.locator('input[name="password2"]').fill('password123');
    await submit(page);
    await page.waitForURL('**/login');
    await login(page, username, 'password123');
    await page.waitForURL('**/token');

    const menu = page.locator('.aigw-menu-wrapper');
    await menu.getByText('令牌').waitFor();
    for (const adminEntry of ['用户管理', '渠道', '兑换码']) {
      await expect(menu.getByText(adminEntry, { exact: true }).count()).resolves.toBe(0);
    }
    await page.goto('/user');
    await page.getByText('无权进行此操作').waitFor();
    await page.waitForURL((u) => u.pathname === '/');
    await page.goto('/setting?tab=system');
    await expect(page.getByRole('tab', { name: '个人设置' }).waitFor()).resolves.toBeUndefined();
    await expect(page.getByRole('tab', { name: '系统设置' }).count()).resolves.toBe(0);
    await context.close();
  });

  it('when a user turns 2FA on in personal settings, then the next login asks for the code and lets in with it', async () => {
    const { context, page } = await freshPage();
    const username = uniqueName();
    const reg = await page.request.post('/api/user/register', {
      data: { username, password: 'password123', password2: 'password123' },
    });
    expect((await reg.json()).success).toBe(true);
    await login(page, username, 'password123');
    await page.waitForURL('**/token');
    // The server accepts the steps next to its own, each once: enabling spends step s, the login
    // s + 1, which passes whenever both happen within 30 s of reading s.
    const step = Math.floor(Date.now() / 30_000);
    await page.goto('/setting');
    const card = page.locator('[data-card="two-factor"]');
    await card.getByText('未启用').waitFor();
    await card.getByRole('button', { name: '启用两步验证' }).click();
    const secret = (await page.locator('[data-field="totp_secret"]').innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await expect(page.locator('.arco-modal img[alt="otpauth QR"]').getAttribute('src')).resolves.toMatch(
      /^data:image\/png;base64,/,
    );
    await page.locator('input[name="two_factor_code"]').fill(authenticatorCode(secret, step));
    await page.locator('.arco-modal').getByRole('button', { name: '确认' }).click();
    await toast(page, '两步验证启用成功').waitFor();
    await card.getByText('已启用').waitFor();

    const second = await freshPage();
    await login(second.page, username, 'password123');
    await second.page.getByText('请输入认证器应用中的 6 位验证码，或一个备用码').waitFor();
    await second.page.locator('input[name="two_factor_code"]').fill(authenticatorCode(secret, step + 1));
    await submit(second.page);
    await second.page.waitForURL('**/token');
    await context.close();
    await second.context.close();
  });

  it('when a user registers a passkey in personal settings, then the login page signs in with it (virtual authenticator)', async () => {
    // WebAuthn needs a host name (no IP) as RP ID: this user's browser uses localhost.
    const origin = url.replace('127.0.0.1', 'localhost');
    const admin = await browser.newContext({ baseURL: url, extraHTTPHeaders: { 'X-Forwarded-For': '10.7.0.1' } });
    const rootLogin = await admin.request.post('/api/user/login', { data: { username: 'root', password: '123456' } });
    expect((await rootLogin.json()).success).toBe(true);
    for (const [key, value] of [
      ['passkey.origins', origin],
      ['passkey.enabled', 'true'],
    ]) {
      const saved = await admin.request.put('/api/option/', { data: { key, value }, headers: { 'New-Api-User': '1' } });
      expect((await saved.json()).success).toBe(true);
    }
    await admin.close();
    await eventually(
      async () => ((await (await fetch(`${url}/api/status`)).json()) as { data: { passkey_login: boolean } }).data,
      (d) => d.passkey_login === true,
    );

    const context = await browser.newContext({
      baseURL: origin,
      extraHTTPHeaders: { 'X-Forwarded-For': `10.6.${seq % 250}.${(seq++ % 250) + 1}` },
    });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    const username = uniqueName();
    const reg = await page.request.post('/api/user/register', {
      data: { username, password: 'password123', password2: 'password123' },
    });
    expect((await reg.json()).success).toBe(true);
    await login(page, username, 'password123');
    await page.waitForURL('**/token');

    await page.goto('/setting');
    const card = page.locator('[data-card="passkey"]');
    await card.getByText('未绑定').waitFor();
    await card.getByRole('button', { name: '注册 Passkey' }).click();
    await toast(page, 'Passkey 注册成功').waitFor();
    await card.getByText('已绑定').waitFor();
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);

    await page.locator('.aigw-user').hover();
    await page.getByRole('menuitem', { name: '退出' }).click();
    await page.waitForURL('**/login');
    await page.getByRole('button', { name: '使用 Passkey 登录' }).click();
    await page.waitForURL('**/token');
    expect(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').username)).toBe(username);
    const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(after.credentials[0]?.signCount).toBeGreaterThan(credentials[0]?.signCount ?? 0);
    await context.close();
  });
});
