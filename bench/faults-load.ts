/**
 * The fault suite's load: the client (an undici pool to the relay) that records every request as
 * the client saw it (`Req`), the console session of the playground requests, and the open loop of
 * whole and streamed chats at a fixed rate.
 */

import { createHmac } from 'node:crypto';
import type { Redis } from '../services/common/src/index.ts';
import { Pool } from '../services/relay/test/bench/load.ts';
import {
  LOAD_S,
  now,
  RATE,
  REQUEST_TIMEOUT_MS,
  type Req,
  type Scenario,
  STREAM_SHARE,
  type UserRec,
} from './faults-config.ts';
import { errorMessage } from './faults-probes.ts';
import { MODEL, type Platform, sleep } from './platform.ts';

export interface SendOpts {
  /** The token; none for a playground request (the console session's cookie). */
  key?: string;
  stream: boolean;
  /** Numbers the prompt. */
  n: number;
  phase?: Req['phase'];
}

export interface LoadClient {
  send: (user: UserRec, opts: SendOpts) => void;
  /** Resolves when every request sent so far has ended (answered, failed or timed out). */
  settled: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A console session (the gateway's Redis record, read by the relay's /pg route) for `user`: the
 * cookie its playground requests carry.
 */
export async function playgroundCookie(pf: Platform, redis: Redis, sid: string, user: UserRec): Promise<string> {
  await redis.set(
    `sess:${sid}`,
    JSON.stringify({ id: user.userId, username: 'flt', role: 1, status: 1, group: 'default' }),
    'EX',
    3600,
  );
  return `session=${sid}.${createHmac('sha256', pf.stack.env.SESSION_SECRET as string)
    .update(sid)
    .digest('base64url')}`;
}

/** The load's client: each request sent is pushed to `reqs` and filled in as the client sees it end. */
export function loadClient(relayUrl: string, cookie: string, reqs: Req[]): LoadClient {
  const pool = new Pool(relayUrl, {
    connections: 1024,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
    connect: { timeout: 30_000 },
  });
  const inflight: Promise<void>[] = [];
  const send = (user: UserRec, opts: SendOpts) => {
    const r: Req = {
      user,
      stream: opts.stream,
      pg: !opts.key,
      phase: opts.phase ?? 'load',
      sentAt: now(),
      doneAt: 0,
      status: 0,
      rid: '',
      ok: false,
      err: '',
    };
    reqs.push(r);
    const headers: Record<string, string> = opts.key
      ? { 'content-type': 'application/json', authorization: `Bearer ${opts.key}` }
      : { 'content-type': 'application/json', cookie, 'new-api-user': String(user.userId) };
    inflight.push(
      pool
        .request({
          path: opts.key ? '/v1/chat/completions' : '/pg/chat/completions',
          method: 'POST',
          headers,
          body: JSON.stringify({
            model: MODEL,
            messages: [{ role: 'user', content: `hello ${opts.n}` }],
            stream: opts.stream,
          }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        })
        .then(async (res) => {
          r.status = res.statusCode;
          r.rid = String(res.headers['x-aigw-request-id'] ?? '');
          const text = await res.body.text();
          r.ok = res.statusCode === 200 && (opts.stream ? text.includes('data: [DONE]') : text.includes('"choices"'));
          if (!r.ok) r.err = `${res.statusCode} ${errorMessage(text)}`;
        })
        .catch((err: { code?: string; name?: string }) => {
          r.err = `${r.status ? `${r.status} then ` : ''}${err.code ?? err.name ?? 'error'}`;
        })
        .finally(() => {
          r.doneAt = now();
        }),
    );
  };
  return {
    send,
    settled: async () => {
      await Promise.all(inflight);
    },
    close: () => pool.close(),
  };
}

/** How many requests the open loop sends (the next requests after the drain are numbered past it). */
export const LOAD_TOTAL = RATE * LOAD_S;

/**
 * The open loop: RATE requests per second for LOAD_S seconds from `loadStart`, round-robin over the
 * users and their two tokens, STREAM_SHARE of them streamed, plus one playground request of
 * `pgUser` every 500 ms. Returns when the last one was sent.
 */
export async function openLoop(client: LoadClient, users: UserRec[], pgUser: UserRec, loadStart: number) {
  const total = LOAD_TOTAL;
  const interval = 1000 / RATE;
  let sent = 0;
  let pgSent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor((now() - loadStart) / interval) + 1);
    while (sent < due) {
      const i = sent++;
      const user = users[i % users.length] as UserRec;
      client.send(user, {
        key: user.keys[Math.floor(i / users.length) % 2] as string,
        stream: (i * 7919) % 100 < STREAM_SHARE * 100,
        n: i,
      });
    }
    if (now() - loadStart > pgSent * 500) client.send(pgUser, { stream: false, n: total + pgSent++ });
    await sleep(1);
  }
}

/** The playground session id of a scenario. */
export const sessionId = (run: string, sc: Scenario) => `flt-${run}-${sc.name}`;
