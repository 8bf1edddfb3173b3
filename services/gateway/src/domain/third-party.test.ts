import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { telegramId } from './third-party.ts';

const TOKEN = '42:bot-token';
const sign = (fields: Record<string, string>, token = TOKEN) => {
  const check = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  return {
    ...fields,
    hash: createHmac('sha256', createHash('sha256').update(token).digest()).update(check).digest('hex'),
  };
};

describe('the chat-app login widget check', () => {
  const now = 1_700_000_000;
  it('when the fields are signed with the bot token, then the account id is returned', () => {
    expect(telegramId(sign({ id: '7', first_name: 'A', auth_date: String(now) }), TOKEN, now)).toBe('7');
  });
  it('when a field was changed, the token differs or the hash is missing, then it is refused', () => {
    const signed = sign({ id: '7', auth_date: String(now) });
    expect(() => telegramId({ ...signed, id: '8' }, TOKEN, now)).toThrow('无效的请求');
    expect(() => telegramId(sign({ id: '7', auth_date: String(now) }, 'other'), TOKEN, now)).toThrow('无效的请求');
    expect(() => telegramId({ id: '7', auth_date: String(now) }, TOKEN, now)).toThrow('无效的请求');
  });
  it('when the data is more than a day old, then it is refused', () => {
    expect(() => telegramId(sign({ id: '7', auth_date: String(now - 86_401) }), TOKEN, now)).toThrow('已过期');
  });
});
