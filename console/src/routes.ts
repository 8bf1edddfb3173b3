import { Role, type Status } from './api/types.ts';
import type { LocaleKey } from './locale/zh-CN.ts';

/** Icons the menu can show; mapped to Arco icons in components/MenuIcon. */
export type IconName =
  | 'playground'
  | 'pricing'
  | 'channel'
  | 'models'
  | 'chat'
  | 'token'
  | 'redemption'
  | 'topup'
  | 'user'
  | 'log'
  | 'detail'
  | 'midjourney'
  | 'task'
  | 'setting';

/** Status flags that switch a menu entry on. */
export type MenuFlag = keyof Pick<Status, 'enable_data_export' | 'enable_drawing' | 'enable_task'>;

export interface MenuSpec {
  /** Shown only when this status flag is true. */
  flag?: MenuFlag;
  /** The chat entry: expanded from status.chats instead of linking to `path`. */
  chats?: boolean;
}

export interface AppRoute {
  /** Unique key; also the menu item key. */
  key: string;
  /** react-router path. */
  path: string;
  /** i18n key of the route's name (menu label, default page title). */
  name: LocaleKey;
  /** i18n key of the page title when it differs from the menu label. */
  title?: LocaleKey;
  /** Folder under src/pages/ holding index.tsx. */
  page: string;
  icon?: IconName;
  /** Redirects to /login when nobody is stored locally. */
  requireLogin?: boolean;
  /** Minimum role to see the menu entry and open the page. */
  role?: number;
  /** Present when the route has a side-menu entry; entries keep this table's order. */
  menu?: MenuSpec;
}

/**
 * The route table of spec 02 section 2. Menu routes come first, in the side menu's order;
 * the router ranks paths itself, so the order does not matter for matching.
 */
// biome-ignore format: one route per line reads as the table it is
export const routes: readonly AppRoute[] = [
  { key: 'playground', path: '/playground', name: 'menu.playground', page: 'playground', icon: 'playground', requireLogin: true, menu: {} },
  { key: 'pricing', path: '/pricing', name: 'menu.pricing', page: 'pricing', icon: 'pricing', menu: {} },
  { key: 'channel', path: '/channel', name: 'menu.channel', title: 'page.channel.title', page: 'channel', icon: 'channel', requireLogin: true, role: Role.admin, menu: {} },
  { key: 'models', path: '/models', name: 'menu.models', title: 'page.models.title', page: 'models', icon: 'models', requireLogin: true, role: Role.admin, menu: {} },
  { key: 'chat', path: '/chat/:id?', name: 'menu.chat', page: 'chat', icon: 'chat', menu: { chats: true } },
  { key: 'token', path: '/token', name: 'menu.token', page: 'token', icon: 'token', requireLogin: true, menu: {} },
  { key: 'redemption', path: '/redemption', name: 'menu.redemption', title: 'page.redemption.title', page: 'redemption', icon: 'redemption', requireLogin: true, role: Role.admin, menu: {} },
  { key: 'topup', path: '/topup', name: 'menu.topup', page: 'topup', icon: 'topup', requireLogin: true, menu: {} },
  { key: 'user', path: '/user', name: 'menu.user', title: 'page.user.title', page: 'user', icon: 'user', requireLogin: true, role: Role.admin, menu: {} },
  { key: 'log', path: '/log', name: 'menu.log', page: 'log', icon: 'log', requireLogin: true, menu: {} },
  { key: 'detail', path: '/detail', name: 'menu.detail', page: 'detail', icon: 'detail', requireLogin: true, menu: { flag: 'enable_data_export' } },
  { key: 'midjourney', path: '/midjourney', name: 'menu.midjourney', page: 'midjourney', icon: 'midjourney', requireLogin: true, menu: { flag: 'enable_drawing' } },
  { key: 'task', path: '/task', name: 'menu.task', page: 'task', icon: 'task', requireLogin: true, menu: { flag: 'enable_task' } },
  { key: 'setting', path: '/setting', name: 'menu.setting', page: 'setting', icon: 'setting', requireLogin: true, menu: {} },

  { key: 'home', path: '/', name: 'route.home', page: 'home' },
  { key: 'channelEdit', path: '/channel/edit/:id', name: 'route.channelEdit', page: 'channel-edit', requireLogin: true, role: Role.admin },
  { key: 'channelAdd', path: '/channel/add', name: 'route.channelAdd', page: 'channel-edit', requireLogin: true, role: Role.admin },
  { key: 'userEdit', path: '/user/edit/:id', name: 'route.userEdit', page: 'user-edit', requireLogin: true, role: Role.admin },
  { key: 'userEditSelf', path: '/user/edit', name: 'route.userEditSelf', page: 'user-edit', requireLogin: true },
  { key: 'userReset', path: '/user/reset', name: 'route.userReset', page: 'user-reset' },
  { key: 'login', path: '/login', name: 'route.login', page: 'login' },
  { key: 'register', path: '/register', name: 'route.register', page: 'register' },
  { key: 'reset', path: '/reset', name: 'route.reset', page: 'reset' },
  { key: 'oauthGithub', path: '/oauth/github', name: 'route.oauthGithub', page: 'oauth-github' },
  { key: 'oauthSso', path: '/oauth/:provider', name: 'route.oauthSso', page: 'oauth-sso' },
  { key: 'about', path: '/about', name: 'route.about', page: 'about' },
  { key: 'chat2link', path: '/chat2link', name: 'route.chat2link', page: 'chat2link', requireLogin: true },
  { key: 'notFound', path: '*', name: 'route.notFound', page: 'not-found' },
];

/** The route whose key is given; throws for an unknown key (a programming error). */
export function routeByKey(key: string): AppRoute {
  const route = routes.find((r) => r.key === key);
  if (!route) throw new Error(`unknown route ${key}`);
  return route;
}
