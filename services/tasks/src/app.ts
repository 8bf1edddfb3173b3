import { randomUUID } from 'node:crypto';
import {
  type App,
  connectMongo,
  connectRedis,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublisher,
  ensureTopics,
  type Logger,
  listen,
  type OptionsCache,
  type Publisher,
  pingMongo,
  service,
  startGrpcServer,
  stopStack,
  topicName,
} from '@aigw/common';
import { PricingService, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { TasksService } from '@aigw/proto/tasks/v1/tasks';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { asyncTaskRepository } from './data/async-task-repository.ts';
import { dueSchedules } from './data/due-schedule.ts';
import { mjTaskRepository } from './data/mj-task-repository.ts';
import { peers as createPeers } from './data/peers.ts';
import { ensureRetentionIndexes, taskRetention } from './data/task-retention.ts';
import { upstreamHttp } from './data/upstream-http.ts';
import { volcUpstream } from './data/volc-upstream.ts';
import { doubaoVideoPlatform } from './domain/doubao-video.ts';
import { type JimengDeps, jimengPlatform } from './domain/jimeng.ts';
import { klingPlatform } from './domain/kling.ts';
import { mjPlatform } from './domain/mj-platform.ts';
import { forwardBase } from './domain/mj-queries.ts';
import type { MjDeps } from './domain/mj-submit.ts';
import type { Peers } from './domain/ports.ts';
import { type SunoDeps, sunoPlatform } from './domain/suno.ts';
import { taskPoller } from './domain/task-poller.ts';
import { videoPlatform } from './domain/video.ts';
import { viduPlatform } from './domain/vidu.ts';
import { tasksHandlers } from './transport/grpc/tasks-handlers.ts';
import { notifier } from './transport/http/notify.ts';
import { listenTaskHttp, taskRequestHandler } from './transport/http/task-server.ts';
import { usagePublisher } from './transport/kafka/usage-publisher.ts';

const PRICE_KEYS = new Set(['ModelPrice', 'GroupRatio', 'ModelRatio']);

type Stack = ReturnType<typeof stopStack>;
type Stores = Awaited<ReturnType<typeof openStores>>;
type Platforms = ReturnType<typeof platformDeps>;

/** Mongo (the record of tasks), the Redis poll schedules, the task repositories, Kafka and its publisher. */
async function openStores(config: Config, logger: Logger, stack: Stack) {
  const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
  stack.add(() => conn.close());
  // The poll schedules (which tasks are due) live in Redis; Mongo stays the record of tasks.
  const redis = await connectRedis(config.REDIS_URL, '', logger);
  stack.add(async () => {
    await redis.quit();
  });
  const schedules = dueSchedules(redis, config.MONGO_DB);
  const mj = mjTaskRepository(conn, schedules('midjourney'));
  await mj.init();
  const asyncTasks = asyncTaskRepository(conn, schedules);
  await asyncTasks.init();
  const kafka = createKafka(config.KAFKA_BROKERS, 'tasks', logger);
  await ensureTopics(kafka, [topicName(TOPICS.usage), topicName(TOPICS.optionChanged)]);
  const publisher = await createPublisher(kafka);
  stack.add(() => publisher.disconnect());
  return { conn, mj, asyncTasks, kafka, publisher };
}

/** The users, channels and billing clients, the options cache, and the peers read through them. */
async function connectPeers(config: Config, logger: Logger, stack: Stack, stores: Stores) {
  const users = createClient(UsersService, config.USERS_ADDR);
  const optionsClient = createClient(OptionsService, config.USERS_ADDR);
  const channels = createClient(ChannelsService, config.CHANNELS_ADDR);
  const tokens = createClient(TokensService, config.BILLING_ADDR);
  const wallet = createClient(WalletService, config.BILLING_ADDR);
  const pricing = createClient(PricingService, config.BILLING_ADDR);
  stack.add(() => {
    for (const c of [users, optionsClient, channels, tokens, wallet, pricing]) c.close();
  });
  const { kafka, publisher } = stores;
  const options = await createOptionsCache({ source: optionsClient, kafka, publisher, logger, service: 'tasks' });
  stack.add(() => options.stop());
  const billingPeers = createPeers({ tokens, users, channels, pricing, wallet, ttlMs: config.TASKS_CACHE_TTL_MS });
  // GroupGroupRatio straight from the options (what a user group pays in another group).
  const peers: typeof billingPeers = {
    ...billingPeers,
    ratios: async () => ({
      ...(await billingPeers.ratios()),
      groupGroupRatio: options.json<Record<string, Record<string, number>>>('GroupGroupRatio'),
    }),
  };
  options.onChange((key) => {
    if (PRICE_KEYS.has(key)) peers.dropRatios();
  });
  return { options, peers };
}

/** What the platforms' submits and polls use: the repositories, peers, options, upstreams and usage events. */
function platformDeps(
  config: Config,
  logger: Logger,
  stores: Stores,
  shared: { options: OptionsCache; peers: Peers; publisher: Publisher },
) {
  const upstream = upstreamHttp(config.TASKS_UPSTREAM_TIMEOUT_MS);
  const mj: MjDeps = {
    repo: stores.mj,
    peers: shared.peers,
    options: shared.options,
    upstream,
    usage: usagePublisher(shared.publisher),
    onError: (err, what) => logger.error({ err }, what),
  };
  const suno: SunoDeps = { ...mj, repo: stores.asyncTasks };
  const jimeng: JimengDeps = { ...suno, volc: volcUpstream(config.TASKS_UPSTREAM_TIMEOUT_MS) };
  return { upstream, mj, suno, jimeng };
}

/** One poller per platform; with TASKS_POLLER on, a timer runs their rounds (never two at once). */
function startPollers(config: Config, logger: Logger, stack: Stack, stores: Stores, p: Platforms) {
  const { mj, asyncTasks } = stores;
  const { upstream, mj: deps, jimeng } = p;
  const notify = notifier({
    attempts: config.TASKS_NOTIFY_ATTEMPTS,
    timeoutMs: config.TASKS_NOTIFY_TIMEOUT_MS,
    allowPrivate: config.TASKS_NOTIFY_PRIVATE === 'true',
    onGiveUp: (url, err) => logger.warn({ err, url }, 'notifyHook gave up'),
  });
  const settings = {
    owner: `${config.SERVICE_NAME ?? 'tasks'}-${randomUUID()}`,
    intervalMs: config.TASKS_POLL_INTERVAL_MS,
    leaseMs: config.TASKS_LEASE_MS,
    batch: config.TASKS_POLL_BATCH,
    timeoutMs: config.TASKS_TIMEOUT_MS,
    backoffMaxMs: config.TASKS_BACKOFF_MAX_MS,
    holdTtlMs: config.TASKS_HOLD_TTL_MS,
    rebuildMs: config.TASKS_SCHEDULE_REBUILD_MS,
  };
  const options = deps.options;
  const pollers = [
    taskPoller(
      deps,
      mjPlatform({ repo: mj, upstream, options, notify, forwardBase: () => forwardBase(deps) }),
      settings,
    ),
    taskPoller(deps, sunoPlatform({ repo: asyncTasks, upstream }), settings),
    taskPoller(deps, videoPlatform({ repo: asyncTasks, upstream }), settings),
    taskPoller(deps, klingPlatform({ repo: asyncTasks, upstream }), settings),
    taskPoller(deps, jimengPlatform(jimeng), settings),
    taskPoller(deps, doubaoVideoPlatform({ repo: asyncTasks, upstream }), settings),
    taskPoller(deps, viduPlatform({ repo: asyncTasks, upstream }), settings),
  ];
  const tick = () => Promise.all(pollers.map((p) => p.tick())).then(() => undefined);
  if (config.TASKS_POLLER === 'true') {
    let running: Promise<void> | undefined;
    const timer = setInterval(() => {
      if (running) return;
      running = tick()
        .catch((err) => logger.error({ err }, 'poll tick failed'))
        .finally(() => {
          running = undefined;
        });
    }, config.TASKS_POLL_TICK_MS);
    stack.add(async () => {
      clearInterval(timer);
      await running;
    });
  }
  return tick;
}

/** Retention of finished task records: a pass at start and hourly (data/task-retention.ts). */
async function startRetention(config: Config, logger: Logger, stack: Stack, stores: Stores, options: OptionsCache) {
  await ensureRetentionIndexes(stores.conn);
  const retention = taskRetention(stores.conn, logger, () => options.number('TaskRetentionDays', 0));
  const runRetention = () => void retention.run().catch((err) => logger.warn({ err }, 'task retention failed'));
  const retentionTimer = setInterval(runRetention, config.TASKS_CLEANUP_INTERVAL_MS);
  retentionTimer.unref();
  stack.add(() => clearInterval(retentionTimer));
  runRetention();
}

/**
 * The tasks service's composition root: the midjourney-proxy relay (`/mj/*`), its pollers
 * (every replica polls; leases keep a task with one replica at a time), charges and refunds
 * through billing, usage events to Kafka, and TasksService for the console.
 */
export async function createApp(
  config: Config,
  logger: Logger,
): Promise<App & { grpcPort(): number; httpPort(): number; pollOnce(): Promise<void> }> {
  const stack = stopStack();
  let grpcPort = 0;
  let httpPort = 0;
  let pollOnce = async () => {};
  return {
    grpcPort: () => grpcPort,
    httpPort: () => httpPort,
    pollOnce: () => pollOnce(),
    async start() {
      const stores = await openStores(config, logger, stack);
      const { options, peers } = await connectPeers(config, logger, stack, stores);
      const platforms = platformDeps(config, logger, stores, { options, peers, publisher: stores.publisher });

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(TasksService, tasksHandlers({ mj: stores.mj, tasks: stores.asyncTasks }))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const http = await listenTaskHttp(
        taskRequestHandler(
          { ...platforms, image: platforms.upstream.image },
          { trustedProxies: config.TRUSTED_PROXIES, logger },
        ),
        config.HTTP_PORT,
      );
      httpPort = http.port;
      stack.add(() => http.close());

      pollOnce = startPollers(config, logger, stack, stores, platforms);
      await startRetention(config, logger, stack, stores, options);

      const ops = await listen(createOpsApp({ mongo: () => pingMongo(stores.conn) }), config.METRICS_PORT);
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort, metricsPort: ops.port }, 'tasks service started');
    },
    stop: () => stack.run(),
  };
}
