import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notifier } from './notify.ts';

/** A real hook receiver on loopback; `failFirst` answers 500 that many times before 200. */
let server: Server;
let port = 0;
const calls: unknown[] = [];
let failFirst = 0;
/** Calls answered 200. */
let delivered = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      calls.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (failFirst > 0) {
        failFirst--;
        res.statusCode = 500;
      } else delivered++;
      res.end('ok');
    });
  });
  // Both families on loopback, so that "localhost" answers however it resolves.
  await new Promise<void>((r) => server.listen(0, '::', () => r()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

/** Calls a hook and waits for the notifier to finish: undefined when it was delivered, else the error it gave up with. */
function notifyOnce(url: string, allowPrivate: boolean, attempts = 1): Promise<unknown> {
  return new Promise((resolve) => {
    const before = delivered;
    const notify = notifier({
      attempts,
      timeoutMs: 2_000,
      allowPrivate,
      onGiveUp: (_url, err) => resolve(err ?? new Error('gave up')),
    });
    notify(url, { id: 'task-1', status: 'SUCCESS' });
    const started = Date.now();
    const timer = setInterval(() => {
      if (delivered > before) {
        clearInterval(timer);
        resolve(undefined);
      } else if (Date.now() - started > 10_000) clearInterval(timer);
    }, 20);
  });
}

describe('notifyHook delivery', () => {
  it('when addresses are judged, then only public ones pass (mapped IPv6 judged as IPv4)', () => {
    const judged = Object.fromEntries(
      [
        '8.8.8.8',
        '1.1.1.1',
        '2001:4860:4860::8888',
        '127.0.0.1',
        '10.1.2.3',
        '172.20.0.5',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '0.0.0.0',
        '224.0.0.1',
        '::1',
        '::',
        'fd00::1',
        'fe80::1',
        '::ffff:10.0.0.1',
        '::ffff:8.8.8.8',
        'not-an-ip',
      ].map((a) => [a, isPublicAddress(a)]),
    );
    expect(judged).toEqual({
      '8.8.8.8': true,
      '1.1.1.1': true,
      '2001:4860:4860::8888': true,
      '127.0.0.1': false,
      '10.1.2.3': false,
      '172.20.0.5': false,
      '192.168.1.1': false,
      '169.254.169.254': false,
      '100.64.0.1': false,
      '0.0.0.0': false,
      '224.0.0.1': false,
      '::1': false,
      '::': false,
      'fd00::1': false,
      'fe80::1': false,
      '::ffff:10.0.0.1': false,
      '::ffff:8.8.8.8': true,
      'not-an-ip': false,
    });
  });

  it('when a hook points at loopback by address or by name, then nothing is sent and it is given up at once', async () => {
    const before = calls.length;
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://[::1]:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://localhost:${port}/hook`,
    ]) {
      const started = Date.now();
      const err = (await notifyOnce(url, false, 3)) as { code?: string };
      expect(err?.code, url).toBe('EPRIVATEADDRESS');
      // No retries with backoff (0.5 s, 1 s) for an address that will not change.
      expect(Date.now() - started, url).toBeLessThan(400);
    }
    expect(calls.length).toBe(before);
  });

  it('when private hooks are allowed, then the task arrives, and a failing hook is retried', async () => {
    expect(await notifyOnce(`http://127.0.0.1:${port}/hook`, true)).toBeUndefined();
    expect(calls.at(-1)).toEqual({ id: 'task-1', status: 'SUCCESS' });
    failFirst = 2;
    const before = calls.length;
    expect(await notifyOnce(`http://localhost:${port}/hook`, true, 3)).toBeUndefined();
    expect(calls.length - before).toBe(3);
  });
});
