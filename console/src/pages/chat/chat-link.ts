import { listTokens } from '../../api/token.ts';
import type { Status } from '../../api/types.ts';
import { tr } from '../../locale/translate.ts';

export const ChatMessages = {
  get noLink() {
    return tr('chat.pleaseAskTheAdministratorTo');
  },
  get badLink() {
    return tr('chat.theChatLinksAreMisconfigured');
  },
  get badData() {
    return tr('chat.failedToReadTheChat');
  },
  get noToken() {
    return tr('chat.noEnabledTokenIsAvailable');
  },
} as const;

/** How long the no-token message stays before the browser goes to /token (spec 02: 1.5 s). */
export const NO_TOKEN_REDIRECT_MS = 1500;

/** The link of chat entry `index` from status.chats (a list of {name: link}). */
export function chatLinkAt(
  status: Pick<Status, 'chats'>,
  index: number,
): { name: string; link: string } | { error: string } {
  const chats = status.chats;
  if (!Array.isArray(chats) || chats.length === 0) return { error: ChatMessages.noLink };
  const entry = chats[index];
  if (!entry || typeof entry !== 'object') return { error: ChatMessages.badData };
  const [name, link] = Object.entries(entry)[0] ?? [];
  if (!name || typeof link !== 'string' || !link) return { error: ChatMessages.badLink };
  return { name, link };
}

/** Fills a chat link template: {key} becomes the sk- key, {address} the server address. */
export function fillChatLink(template: string, key: string, address: string): string {
  return template.replaceAll('{key}', `sk-${key}`).replaceAll('{address}', address.replace(/\/+$/, ''));
}

/** The key of the user's first enabled token among the first 100 (undefined when none). */
export async function firstEnabledKey(): Promise<string | undefined> {
  const res = await listTokens(1, 100);
  if (!res.success) return undefined;
  return res.data?.items.find((t) => t.status === 1)?.key;
}

export function serverAddress(status: Pick<Status, 'server_address'>): string {
  return status.server_address || window.location.origin;
}
