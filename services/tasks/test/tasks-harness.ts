/**
 * The tasks service's integration harness: a stack on the real servers (users, channels, billing,
 * logs, tasks, gateway) with short poll intervals and task timeout, a fake midjourney-proxy, a
 * midjourney channel, and helpers to submit through the gateway and read wallets and logs.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKafka, createLogger, createPublisher, type Publisher, topicName } from '@aigw/common';
import { startStack } from '@aigw/local-stack/stack';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { type FakeMidjourney, startFakeMidjourney } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, setOption, userWithToken } from '@aigw/testkit/harness';
import mongoose from 'mongoose';
import { expect } from 'vitest';
import { createApp } from '../src/app.ts';
import { readConfig } from '../src/config.ts';

export { setOption, userWithToken };

/** Loosely typed JSON answers (tests read fields of provider and API shapes). */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary answer fields
export type Json = Record<string, any>;

export const TASK_ENV = {
  TASKS_POLL_INTERVAL_MS: '300',
  TASKS_POLL_TICK_MS: '100',
  TASKS_TIMEOUT_MS: '4000',
  TASKS_BACKOFF_MAX_MS: '1000',
  TASKS_CACHE_TTL_MS: '500',
  // The tests' notifyHook receivers listen on loopback.
  TASKS_NOTIFY_PRIVATE: 'true',
  RATE_LIMIT_API: '1000000',
  RATE_LIMIT_CRITICAL: '100000',
  RATE_LIMIT_WEB: '100000',
};

export interface TasksStack extends RelayStack {
  fake: FakeMidjourney;
  secret: string;
  channelId: number;
  gateway: string;
  /** The tasks service's own database (tests read poll counters). */
  db: mongoose.Connection;
  /** Publishes the markers of logsCaughtUp(). */
  publisher: Publisher;
}

export async function startTasksStack(models: string, env: Record<string, string> = {}): Promise<TasksStack> {
  const stack = await startStack({
    services: ['users', 'channels', 'billing', 'logs', 'tasks', 'gateway'],
    env: { ...TASK_ENV, ...env },
  });
  const s = clientsFor(stack);
  const secret = `mj-secret-${stack.id}`;
  // IN_PROGRESS lasts about a second: several polls (300 ms) see it even on a busy machine.
  const fake = await startFakeMidjourney({ secret, stepMs: 300, steps: 4 });
  const channelId = await createChannel(s, { type: 2, baseUrl: fake.url, key: secret, models });
  const db = mongoose.createConnection(stack.env.MONGO_URL as string, { dbName: `aigw_tasks_${stack.id}` });
  await db.asPromise();
  const publisher = await createPublisher(
    createKafka((stack.env.KAFKA_BROKERS as string).split(','), 'tasks-test', createLogger('tasks-test', 'warn')),
  );
  return {
    ...s,
    fake,
    secret,
    channelId,
    gateway: stack.gatewayUrl,
    db,
    publisher,
    async stop() {
      await publisher.disconnect();
      await db.close();
      await fake.close();
      await s.stop();
    },
  };
}

/**
 * Another tasks-service replica on the same database and topics. `poller: false` leaves polling
 * to the test (pollOnce), so that replicas can be made to poll at the very same moment; `env`
 * overrides its settings (e.g. its own REDIS_URL, SERVICE_NAME).
 */
export async function startTasksReplica(s: TasksStack, opts: { poller?: boolean; env?: Record<string, string> } = {}) {
  const env = {
    ...s.stack.env,
    HTTP_PORT: '0',
    METRICS_PORT: '0',
    GRPC_PORT: '0',
    MONGO_DB: `aigw_tasks_${s.stack.id}`,
    TASKS_POLLER: opts.poller === false ? 'false' : 'true',
    ...opts.env,
  };
  const app = await createApp(readConfig(env), createLogger('tasks-2', s.stack.env.LOG_LEVEL));
  await app.start();
  return app;
}

/**
 * Two auto groups for `default` users: `ga` (GroupRatio 2) then `gb` (GroupRatio 4, 3 for default
 * users by GroupGroupRatio), both usable as special groups, walked in that order by `auto` tokens.
 * One after another (the options reach the tasks service in this order): AutoGroups last.
 */
export async function autoGroups(s: TasksStack, ga: string, gb: string): Promise<void> {
  await setOption(s, 'GroupGroupRatio', JSON.stringify({ default: { [gb]: 3 } }));
  await setOption(s, 'GroupRatio', JSON.stringify({ default: 1, vip: 1, [ga]: 2, [gb]: 4 }));
  await setOption(s, 'UserUsableGroups', JSON.stringify({ default: '默认分组', auto: '自动分组' }));
  await setOption(
    s,
    'group_ratio_setting.group_special_usable_group',
    JSON.stringify({ default: { [`+:${ga}`]: 'A', [`+:${gb}`]: 'B' } }),
  );
  await setOption(s, 'AutoGroups', JSON.stringify([ga, gb]));
}

export async function mj(s: TasksStack, key: string, path: string, body?: unknown) {
  const res = await fetch(`${s.gateway}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
}

/** Waits until the tasks service sees an option (its cache follows Kafka). */
export async function drawingReady(s: TasksStack, key: string): Promise<void> {
  await eventually(
    () => mj(s, key, '/mj/submit/imagine', {}),
    (v) => v.body?.description !== '绘图功能未启用',
    { what: 'DrawingEnabled reaching the tasks service' },
  );
}

export async function walletOf(s: TasksStack, userId: number) {
  const { wallet } = await s.wallet.getWallet({ userId });
  return { quota: wallet?.quota ?? 0, used: wallet?.usedQuota ?? 0 };
}

/** Content of the marker logs of logsCaughtUp() (left out of logsOf). */
const MARKER = 'test marker: logs caught up';

/** The user's logs (newest first), without the markers of logsCaughtUp(). */
export async function logsOf(s: TasksStack, userId: number) {
  const r = await s.logs.queryLogs({ filter: { userId }, page: { page: 1, pageSize: 100 } });
  return r.items.filter((l) => !l.content.startsWith(MARKER));
}

/**
 * Waits until no task of the user has a settle or refund still to do: its usage events (charge,
 * refund) are all published then, and no repair pass will publish one again.
 */
export async function billingDone(s: TasksStack, userId: number): Promise<void> {
  const open = { user_id: userId, billing: { $in: ['settle', 'refund'] } };
  await eventually(
    async () =>
      (await s.db.collection('mj_tasks').countDocuments(open)) + (await s.db.collection('tasks').countDocuments(open)),
    (n) => n === 0,
    { what: `no settle or refund left open for user ${userId}` },
  );
}

/**
 * Waits until the logs service has handled every usage event of the user published so far: a
 * marker event (a system log of 0 quota that nothing else acts on) goes to the same partition
 * (keyed by the user id, as the tasks service keys them) and is handled after them.
 */
export async function logsCaughtUp(s: TasksStack, userId: number): Promise<void> {
  const eventId = `marker-${randomUUID()}`;
  const content = `${MARKER} ${eventId}`;
  await s.publisher.publish(
    topicName(TOPICS.usage),
    UsageEventSchema,
    { eventId, occurredAtMs: Date.now(), userId, type: 4, quota: 0, content },
    String(userId),
  );
  await eventually(
    async () => (await s.logs.queryLogs({ filter: { userId }, page: { page: 1, pageSize: 100 } })).items,
    (items) => items.some((l) => l.content === content),
    { what: `the marker log of user ${userId}` },
  );
}

/**
 * The user's logs once nothing more can arrive for what happened so far: billing of every task
 * done, and the logs service past a marker published after it (what a "nothing logged twice"
 * check counts on, instead of waiting a while).
 */
export async function settledLogs(s: TasksStack, userId: number) {
  await billingDone(s, userId);
  await logsCaughtUp(s, userId);
  return logsOf(s, userId);
}

/**
 * For a refunded task: waits until the user's wallet is back at `start` with nothing used and the
 * refund (type 6) is logged, then until nothing more can be logged (a double refund would log
 * late) and returns the user's logs.
 */
export async function afterRefund(s: TasksStack, userId: number, start = 1_000_000) {
  expect(
    await eventually(
      () => walletOf(s, userId),
      (x) => x.quota === start,
    ),
  ).toEqual({ quota: start, used: 0 });
  await eventually(
    () => logsOf(s, userId),
    (l) => l.some((x) => x.type === 6),
    { what: 'the refund logged' },
  );
  return settledLogs(s, userId);
}

/** Fetches a task through the gateway until `done` holds (throws if it never does); returns every status seen. */
export async function follow(s: TasksStack, key: string, id: string, done: (t: Json) => boolean) {
  const seen: string[] = [];
  const last = await eventually(
    async () => {
      const r = await mj(s, key, `/mj/task/${id}/fetch`);
      const st = String(r.body?.status);
      if (seen.at(-1) !== st) seen.push(st);
      return r;
    },
    (r) => done(r.body),
    { timeoutMs: 20_000, intervalMs: 80, what: `task ${id} done` },
  );
  return { task: last.body, seen };
}

/** A local notifyHook receiver. */
export async function hookServer(): Promise<{ url: string; calls: Json[]; close(): Promise<void> }> {
  const calls: Json[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      calls.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
