import { describe, expect, it } from 'vitest';
import { ChatMessages, chatLinkAt, fillChatLink } from './chat-link.ts';

describe('chat links', () => {
  it('when a template is filled, then the key carries sk- and the address has no trailing slash', () => {
    expect(fillChatLink('https://x/#/?settings={"key":"{key}","url":"{address}"}', 'abc', 'http://gw/')).toBe(
      'https://x/#/?settings={"key":"sk-abc","url":"http://gw"}',
    );
  });
  it('when chats are missing or broken, then the spec messages come back', () => {
    expect(chatLinkAt({ chats: [] }, 0)).toEqual({ error: ChatMessages.noLink });
    expect(chatLinkAt({ chats: [{ a: '' }] }, 0)).toEqual({ error: ChatMessages.badLink });
    expect(chatLinkAt({ chats: [{ Next: 'https://n' }] }, 0)).toEqual({ name: 'Next', link: 'https://n' });
  });
});
