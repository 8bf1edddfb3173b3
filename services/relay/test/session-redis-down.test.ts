/**
 * The playground's console session is read from Redis. With Redis gone the relay cannot tell who
 * the caller is: it refuses (fail closed) with a clear 503, not an internal error. A private
 * redis-server is started and shut down (the shared one is left alone).
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { connectRedis, type Redis } from '@aigw/common';
import { privateRedis } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayError } from '../src/domain/relay-error.ts';
import { sessionReader } from '../src/transport/http/session.ts';

const SECRET = 'test-session-secret';
let server: Awaited<ReturnType<typeof privateRedis>>;
let redis: Redis;

beforeAll(async () => {
  server = await privateRedis();
  redis = await connectRedis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.kill();
});

function request(sid: string, userId: number): IncomingMessage {
  const mac = createHmac('sha256', SECRET).update(sid).digest('base64url');
  return { headers: { cookie: `session=${sid}.${mac}`, 'new-api-user': String(userId) } } as unknown as IncomingMessage;
}

describe('console sessions without Redis', () => {
  it('when Redis answers, the session is read; when it is gone, the caller gets a 503 saying so', async () => {
    const read = sessionReader(redis, SECRET);
    const user = { id: 7, username: 'ann', role: 1, status: 1, group: 'default' };
    await redis.set('sess:s1', JSON.stringify(user));
    expect(await read(request('s1', 7))).toEqual(user);

    await server.kill();
    const err = await read(request('s1', 7)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RelayError);
    expect((err as RelayError).status).toBe(503);
    expect((err as RelayError).message).toBe('会话服务暂不可用，请稍后重试');
  }, 30_000);
});
