/**
 * The tasks service's idea of the client's address, on which a token's IP allow-list is checked:
 * X-Forwarded-For is believed only from the peers in TRUSTED_PROXIES, read from the right, so a
 * caller that reaches the task port directly cannot pass as an allowed address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTasksReplica, startTasksStack, type TasksStack, userWithToken } from './tasks-harness.ts';

const REFUSED = '您的 IP 不在令牌允许访问的列表中';

let s: TasksStack;
let key: string;

beforeAll(async () => {
  // This stack's services trust no proxy at all.
  s = await startTasksStack('mj_imagine', { TRUSTED_PROXIES: '' });
  ({ key } = await userWithToken(s, { token: { allowIps: '203.0.113.7' } }));
});

afterAll(async () => {
  await s?.stop();
});

async function fetchTask(base: string, forwardedFor?: string) {
  const res = await fetch(`${base}/mj/task/no-such-task/fetch`, {
    headers: { authorization: `Bearer ${key}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('client address on the task routes', () => {
  it('when a direct caller names an allowed address in X-Forwarded-For and no proxy is trusted, then the token refuses it', async () => {
    const direct = s.stack.env.TASKS_HTTP_URL as string;
    const r = await fetchTask(direct, '203.0.113.7');
    expect(r.status).toBe(403);
    expect(r.body.description).toBe(REFUSED);
    // Through the gateway (which replaces the header with the address it saw) likewise.
    const via = await fetchTask(s.gateway, '203.0.113.7');
    expect(via.status).toBe(403);
    expect(via.body.description).toBe(REFUSED);
  });

  it('when loopback is a trusted proxy, then its X-Forwarded-For names the client, read from the right', async () => {
    const replica = await startTasksReplica(s, { poller: false, env: { TRUSTED_PROXIES: 'loopback' } });
    try {
      const base = `http://127.0.0.1:${replica.httpPort()}`;
      // The allowed address forwarded by a trusted peer passes the allow-list: the task is unknown.
      const allowed = await fetchTask(base, '203.0.113.7');
      expect(allowed.status).toBe(404);
      expect(allowed.body.description).not.toBe(REFUSED);
      // A forged left-most entry behind an untrusted hop is never reached.
      const forged = await fetchTask(base, '203.0.113.7, 198.51.100.1');
      expect(forged.status).toBe(403);
      expect(forged.body.description).toBe(REFUSED);
      // No header: the peer itself (loopback) is the client.
      const none = await fetchTask(base);
      expect(none.status).toBe(403);
    } finally {
      await replica.stop();
    }
  });
});
