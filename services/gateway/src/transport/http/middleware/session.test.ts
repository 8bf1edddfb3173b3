import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sessionView, signedSessionId } from './session.ts';

const mac = (sid: string, secret: string) => createHmac('sha256', secret).update(sid).digest('base64url');

describe('session cookies and views', () => {
  it('when the cookie carries an id with its HMAC, then the id is read; a wrong or missing HMAC is refused', () => {
    expect(signedSessionId(`abc.def.${mac('abc.def', 's1')}`, 's1')).toBe('abc.def');
    expect(signedSessionId(`abc.${mac('abc', 's1')}`, 's2')).toBeUndefined();
    expect(signedSessionId(`abd.${mac('abc', 's1')}`, 's1')).toBeUndefined();
    expect(signedSessionId('abc', 's1')).toBeUndefined();
    expect(signedSessionId(`.${mac('', 's1')}`, 's1')).toBeUndefined();
    expect(signedSessionId(undefined, 's1')).toBeUndefined();
  });

  it('when a session is listed, then its owner sees a public id, its origin and when it expires', () => {
    const meta = {
      login_method: 'password',
      ip: '10.0.0.1',
      user_agent: 'ua',
      created_at: '100',
      last_active_at: '160',
    };
    const v = sessionView('sid-1', 'sid-1', 3600, meta, 1000);
    expect(v).toMatchObject({
      current: true,
      login_method: 'password',
      ip: '10.0.0.1',
      user_agent: 'ua',
      created_at: 100,
      last_active_at: 160,
      expires_at: 4600,
    });
    expect(v.sid).toHaveLength(22);
    expect(v.sid).not.toContain('sid-1');
    expect(sessionView('sid-2', 'sid-1', 1, {}, 0)).toMatchObject({ current: false, login_method: '', created_at: 0 });
  });
});
