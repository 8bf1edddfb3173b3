// @vitest-environment node
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enUS } from './locale/en-US.ts';
import { zhCN } from './locale/zh-CN.ts';
import { routeByKey, routes } from './routes.ts';

describe('route table', () => {
  it('holds every route of spec 02 section 2', () => {
    expect(routes.map((r) => r.path).sort()).toEqual(
      [
        '/',
        '/channel',
        '/channel/edit/:id',
        '/channel/add',
        // Beyond the spec: new-api's model catalogue (admin).
        '/models',
        '/token',
        '/playground',
        '/redemption',
        '/user',
        '/user/edit/:id',
        '/user/edit',
        '/user/reset',
        '/login',
        '/register',
        '/reset',
        '/oauth/github',
        // Beyond the spec: the single sign-on callback (OIDC, Linux DO, Discord, custom providers).
        '/oauth/:provider',
        '/setting',
        '/topup',
        '/log',
        '/detail',
        '/midjourney',
        '/task',
        '/pricing',
        '/about',
        '/chat/:id?',
        '/chat2link',
        '*',
      ].sort(),
    );
  });

  it('guards the login-guarded routes and leaves the public ones open', () => {
    const guarded = routes.filter((r) => r.requireLogin).map((r) => r.path);
    for (const path of [
      '/channel',
      '/token',
      '/playground',
      '/redemption',
      '/user',
      '/setting',
      '/topup',
      '/log',
      '/detail',
      '/midjourney',
      '/task',
      '/chat2link',
    ]) {
      expect(guarded).toContain(path);
    }
    for (const path of [
      '/',
      '/pricing',
      '/about',
      '/login',
      '/register',
      '/reset',
      '/oauth/github',
      '/user/reset',
      '*',
    ]) {
      expect(guarded).not.toContain(path);
    }
  });

  it('requires the admin role for channel, redemption and user management', () => {
    for (const key of ['channel', 'models', 'redemption', 'user', 'channelEdit', 'channelAdd', 'userEdit']) {
      expect(routeByKey(key).role).toBe(10);
    }
    expect(routeByKey('setting').role).toBeUndefined();
  });

  it('has a page folder and labels in both locales for every route', () => {
    for (const route of routes) {
      expect(existsSync(join(import.meta.dirname, 'pages', route.page, 'index.tsx')), route.page).toBe(true);
      expect(zhCN[route.name]).toBeTruthy();
      expect(enUS[route.name]).toBeTruthy();
    }
  });
});
