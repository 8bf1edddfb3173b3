import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createLogger } from '@aigw/common';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from './hardening-raw.ts';

/**
 * Issue 10 item 8 (HTTP part): request bodies are never logged. The services of an in-process
 * stack log through pino, which writes to stdout/stderr with fs.write/fs.writeSync: the test
 * captures those writes while logins, registrations and malformed or oversize bodies carrying a
 * known password go through the gateway (debug level), then looks for the password.
 */
describe('secrets stay out of the logs', () => {
  let stack: Stack;
  const captured: string[] = [];
  const original = { write: fs.write, writeSync: fs.writeSync };

  beforeAll(async () => {
    const keep = (fd: unknown, data: unknown) => {
      if ((fd === 1 || fd === 2) && (typeof data === 'string' || Buffer.isBuffer(data))) captured.push(String(data));
    };
    // pino (sonic-boom) calls these on the fs module object at write time.
    fs.writeSync = ((fd: number, data: string | Buffer, ...rest: unknown[]) => {
      keep(fd, data);
      return (original.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
    }) as typeof fs.writeSync;
    fs.write = ((fd: number, data: string | Buffer, ...rest: unknown[]) => {
      keep(fd, data);
      return (original.write as (...a: unknown[]) => void)(fd, data, ...rest);
    }) as typeof fs.write;
    stack = await startStack({
      services: ['users', 'channels', 'billing', 'gateway'],
      env: { LOG_LEVEL: 'debug', RATE_LIMIT_CRITICAL: '100000', RATE_LIMIT_API: '100000' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    fs.write = original.write;
    fs.writeSync = original.writeSync;
  });

  it('when passwords travel in every kind of login and registration body, then none is logged', async () => {
    const password = `Pw-${randomBytes(6).toString('hex')}`;
    const username = `lg${randomBytes(4).toString('hex')}`;
    const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      raw(stack.gatewayUrl, {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const reg = await post('/api/user/register', JSON.stringify({ username, password, password2: password }));
    expect((reg.json() as { success: boolean }).success).toBe(true);
    expect((await post('/api/user/login', JSON.stringify({ username, password }))).status).toBe(200);
    await post('/api/user/login', JSON.stringify({ username, password: `${password}-wrong` }));
    await post('/api/user/login', JSON.stringify({ username: `nobody-${username}`, password }));
    await post('/api/user/login', `{"username":"${username}","password":"${password}"`); // malformed
    await post('/api/user/login', `{"username":"${username}","password":"${password}","x":${'1'.repeat(2_000_000)}}`);
    await post('/api/user/login', JSON.stringify({ username: { $gt: '' }, password }));
    await post(
      '/api/user/login',
      Buffer.concat([Buffer.from(`{"password":"${password}","u":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    );
    await post('/api/user/login', JSON.stringify({ username, password }), { 'content-encoding': 'gzip' });
    await post('/api/user/reset', `{"email":"a@b.c","token":"${password}"`);
    // The capture works: a line logged now is seen.
    const marker = `marker-${randomBytes(4).toString('hex')}`;
    createLogger('probe', 'info').info(marker);
    await new Promise((r) => setTimeout(r, 300));
    const text = captured.join('');
    expect(text).toContain(marker);
    expect(text).not.toContain(password);
  });
});
