/**
 * Screenshots of the built console for a visual check, without a gateway: GET /api/status and
 * the login/logout calls are answered in the browser. Usage (from console/, with
 * `npx vite preview --port 4173` running): npx tsx test/browser/screenshot.ts [baseUrl] [outDir]
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from './launch.ts';

const baseUrl = process.argv[2] ?? 'http://localhost:4173';
const outDir = process.argv[3] ?? '/tmp/console-shots';
mkdirSync(outDir, { recursive: true });

const status = {
  system_name: 'AI Gateway',
  enable_drawing: true,
  enable_task: true,
  enable_data_export: true,
  chats: [{ 'ChatGPT Next Web': 'https://chat/#/?key={key}' }, { Lobe: 'https://lobe/?key={key}' }],
  version: 'v0.1.0',
};
const admin = { id: 1, username: 'root', display_name: 'Root User', role: 100 };

async function answerApi(page: Page, statusOk = true) {
  await page.route('**/api/status', (route) =>
    statusOk
      ? route.fulfill({ json: { success: true, message: '', data: status } })
      : route.fulfill({ status: 502, body: 'bad gateway' }),
  );
  await page.route('**/api/user/logout', (route) => route.fulfill({ json: { success: true, message: '' } }));
}

async function shot(page: Page, name: string) {
  await page.waitForTimeout(1200);
  await page.screenshot({ path: join(outDir, `${name}.png`) });
  console.log(`${name}.png`);
}

const browser = await launchBrowser();
try {
  const desktop = { viewport: { width: 1366, height: 800 } };

  const guest = await browser.newPage(desktop);
  await answerApi(guest);
  await guest.goto(`${baseUrl}/token`);
  await guest.waitForURL('**/login');
  await shot(guest, 'guest-login-redirect');
  await guest.goto(`${baseUrl}/login?expired=true`);
  await shot(guest, 'guest-login-expired');

  const ctx = await browser.newContext(desktop);
  await ctx.addInitScript((user) => localStorage.setItem('user', JSON.stringify(user)), admin);
  const page = await ctx.newPage();
  await answerApi(page);
  await page.goto(`${baseUrl}/channel`);
  await shot(page, 'admin-channel');
  await page.goto(`${baseUrl}/setting?tab=system`);
  await shot(page, 'admin-setting');
  await page.getByRole('button', { name: '切换为暗色模式' }).click();
  await shot(page, 'admin-dark');
  const themeAttr = await page.evaluate(() => document.body.getAttribute('arco-theme'));
  console.log(`arco-theme=${themeAttr} stored=${await page.evaluate(() => localStorage.getItem('arco-theme'))}`);
  await page.goto(`${baseUrl}/no/such/page`);
  await shot(page, 'admin-not-found');
  await page.locator('.aigw-user').hover();
  await shot(page, 'admin-avatar-menu');
  await page.getByText('退出').click();
  await page.waitForURL('**/login');
  console.log(`after logout: ${page.url()} user=${await page.evaluate(() => localStorage.getItem('user'))}`);

  const mobile = await browser.newPage({ viewport: { width: 375, height: 720 } });
  await answerApi(mobile);
  await mobile.goto(`${baseUrl}/pricing`);
  await shot(mobile, 'mobile-pricing');

  const down = await browser.newPage(desktop);
  await answerApi(down, false);
  await down.goto(`${baseUrl}/`);
  await shot(down, 'server-down');
} finally {
  await browser.close();
}
