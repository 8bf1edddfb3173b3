/**
 * Shared setup of the channel and wallet browser tests: a console build, a stack serving it, a
 * headless Chromium, fresh contexts and small page helpers.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type ServiceName, type Stack, startStack } from '../../deploy/local/stack/in-process.ts';
import { launchBrowser } from '../test/browser/launch.ts';

const CONSOLE_ROOT = resolve(import.meta.dirname, '..');

/** A fresh build of the console (or E2E_CONSOLE_DIR when the caller built one). */
export function consoleBuild(): string {
  const given = process.env.E2E_CONSOLE_DIR;
  if (given && existsSync(join(given, 'index.html'))) return given;
  const out = mkdtempSync(join(tmpdir(), 'aigw-console-'));
  execFileSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: CONSOLE_ROOT,
    stdio: 'inherit',
  });
  return out;
}

export interface Harness {
  stack: Stack;
  browser: Browser;
  fresh(): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

let seq = 0;

/** Starts the stack (with the console and any extra environment, e.g. a fake provider's base URL) and the browser. */
export async function startHarness(services: ServiceName[], env: Record<string, string> = {}): Promise<Harness> {
  const dir = consoleBuild();
  const stack = await startStack({
    services,
    env: {
      CONSOLE_DIR: dir,
      RATE_LIMIT_API: '100000',
      RATE_LIMIT_WEB: '100000',
      RATE_LIMIT_CRITICAL: '100000',
      ...env,
    },
  });
  const browser = await launchBrowser();
  return {
    stack,
    browser,
    async fresh() {
      const context = await browser.newContext({
        baseURL: stack.gatewayUrl,
        extraHTTPHeaders: { 'X-Forwarded-For': `10.77.${seq % 250}.${(seq++ % 250) + 1}` },
      });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.gatewayUrl });
      return { context, page: await context.newPage() };
    },
    async close() {
      await browser.close();
      await stack.stop();
    },
  };
}

/** A toast with this text. */
export const toast = (page: Page, text: string) => page.locator('.arco-message').filter({ hasText: text }).first();

/** Logs in through the login page and waits for the token page. */
export async function login(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(password);
  await page.locator('main form button[type="submit"]').click();
  await page.waitForURL('**/token');
}
