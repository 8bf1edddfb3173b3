import type { ChatLinkMap, Status, User } from './api/types.ts';
import type { LocaleKey } from './locale/zh-CN.ts';
import { type AppRoute, routes as allRoutes, type IconName } from './routes.ts';
import { hasRole } from './store/roles.ts';

/** One side-menu entry: a link (path) or a submenu (children). */
export interface MenuEntry {
  key: string;
  /** i18n key of the label. */
  name?: LocaleKey;
  /** Literal label (chat names come from the settings, not the locale). */
  label?: string;
  icon?: IconName;
  path?: string;
  children?: MenuEntry[];
}

export interface MenuContext {
  user: Pick<User, 'role'> | null;
  status: Status;
}

/** Mobile means a width of 600 px or less (spec 01 section 9). */
export const MOBILE_MAX_WIDTH = 600;

/** True when the flag is on; tolerates the text form the local keys use. */
function flagOn(value: unknown): boolean {
  return value === true || value === 'true';
}

/** Names of the configured chats, in order; malformed entries are skipped. */
export function chatNames(chats: unknown): string[] {
  if (!Array.isArray(chats)) return [];
  return chats.flatMap((chat: ChatLinkMap | null) => {
    const name = chat && typeof chat === 'object' ? Object.keys(chat)[0] : undefined;
    return name ? [name] : [];
  });
}

/**
 * The chat entry: one configured chat links straight to /chat/0, several make a submenu of
 * /chat/{index}; with none (a lone chat_link setting included) there is no entry.
 */
function chatEntry(route: AppRoute, status: Status): MenuEntry[] {
  const names = chatNames(status.chats);
  const base = { key: route.key, name: route.name, icon: route.icon };
  if (names.length === 0) return [];
  if (names.length === 1) return [{ ...base, path: '/chat/0' }];
  return [{ ...base, children: names.map((label, index) => ({ key: `chat${index}`, label, path: `/chat/${index}` })) }];
}

/** Builds the side menu from the route table for this user and status (spec 02 section 2). */
export function buildMenu(context: MenuContext, table: readonly AppRoute[] = allRoutes): MenuEntry[] {
  return table.flatMap((route): MenuEntry[] => {
    const spec = route.menu;
    if (!spec) return [];
    if (!hasRole(context.user, route.role)) return [];
    if (spec.flag && !flagOn(context.status[spec.flag])) return [];
    if (spec.chats) return chatEntry(route, context.status);
    return [{ key: route.key, name: route.name, icon: route.icon, path: route.path }];
  });
}

/** The side menu starts collapsed on mobile or when the admin asked for it. */
export function defaultCollapsed(width: number, status: Status): boolean {
  return width <= MOBILE_MAX_WIDTH || flagOn(status.default_collapse_sidebar);
}

/** The menu key to highlight for a location path. */
export function selectedMenuKey(pathname: string, entries: readonly MenuEntry[]): string | undefined {
  const flat = entries.flatMap((entry) => (entry.children ? entry.children : [entry]));
  const exact = flat.find((entry) => entry.path === pathname);
  if (exact) return exact.key;
  const prefix = flat
    .filter((entry) => entry.path && entry.path !== '/' && pathname.startsWith(`${entry.path}/`))
    .sort((a, b) => (b.path?.length ?? 0) - (a.path?.length ?? 0))[0];
  return prefix?.key;
}
