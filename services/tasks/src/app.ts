import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type App,
  BadRequest,
  clientError,
  connectMongo,
  connectRedis,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublicApp,
  createPublisher,
  ensureTopics,
  type Logger,
  listen,
  pingMongo,
  service,
  startGrpcServer,
  stopStack,
  topicName,
  trustedProxies,
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
import { type SunoDeps, sunoPlatform } from './domain/suno.ts';
import { taskPoller } from './domain/task-poller.ts';
import { videoPlatform } from './domain/video.ts';
import { viduPlatform } from './domain/vidu.ts';
import { tasksHandlers } from './transport/grpc/tasks-handlers.ts';
import { withJsonErrors } from './transport/http/errors.ts';
import { jimengRoutes } from './transport/http/jimeng-routes.ts';
import { klingRoutes } from './transport/http/kling-routes.ts';
import { mjRoutes, send } from './transport/http/mj-routes.ts';
import { notifier } from './transport/http/notify.ts';
import { sunoRoutes } from './transport/http/suno-routes.ts';
import { videoGenerationRoutes } from './transport/http/video-generation-routes.ts';
import { videoRoutes } from './transport/http/video-routes.ts';
import { usagePublisher } from './transport/kafka/usage-publisher.ts';

const PRICE_KEYS = new Set(['ModelPrice', 'GroupRatio', 'ModelRatio']);

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

      const users = createClient(UsersService, config.USERS_ADDR);
      const optionsClient = createClient(OptionsService, config.USERS_ADDR);
      const channels = createClient(ChannelsService, config.CHANNELS_ADDR);
      const tokens = createClient(TokensService, config.BILLING_ADDR);
      const wallet = createClient(WalletService, config.BILLING_ADDR);
      const pricing = createClient(PricingService, config.BILLING_ADDR);
      stack.add(() => {
        for (const c of [users, optionsClient, channels, tokens, wallet, pricing]) c.close();
      });
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

      const upstream = upstreamHttp(config.TASKS_UPSTREAM_TIMEOUT_MS);
      const deps: MjDeps = {
        repo: mj,
        peers,
        options,
        upstream,
        usage: usagePublisher(publisher),
        onError: (err, what) => logger.error({ err }, what),
      };

      const suno: SunoDeps = { ...deps, repo: asyncTasks };
      const jimeng: JimengDeps = { ...suno, volc: volcUpstream(config.TASKS_UPSTREAM_TIMEOUT_MS) };

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(TasksService, tasksHandlers({ mj, tasks: asyncTasks }))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      // The public port serves the task routes and /healthz; /metrics and /readyz are on the
      // metrics port only (docs/security.md).
      const publicApp = withJsonErrors(createPublicApp(), logger);
      const trusted = trustedProxies(config.TRUSTED_PROXIES);
      const mjHttp = mjRoutes(deps, { trusted, image: upstream.image });
      const sunoHttp = sunoRoutes(suno, { trusted });
      const videoHttp = videoRoutes(suno, { trusted });
      const klingHttp = klingRoutes(suno, { trusted });
      const jimengHttp = jimengRoutes(jimeng, { trusted });
      const generationsHttp = videoGenerationRoutes(jimeng, { trusted });
      const http = createServer((req, res) => {
        mjHttp(req, res)
          .then(async (handled) => {
            if (
              handled ||
              (await sunoHttp(req, res)) ||
              (await videoHttp(req, res)) ||
              (await klingHttp(req, res)) ||
              (await jimengHttp(req, res)) ||
              (await generationsHttp(req, res))
            ) {
              return;
            }
            publicApp(req, res);
          })
          .catch((err) => {
            // A malformed request (a bad escape in the path...) is the client's error.
            const bad =
              clientError(err) ?? (err instanceof URIError ? new BadRequest(400, '请求的编码无效') : undefined);
            if (bad) {
              if (!res.headersSent) send(res, bad.status, { code: 4, description: bad.message, result: null });
              return;
            }
            logger.error({ err }, 'request failed');
            if (!res.headersSent) send(res, 500, { code: 4, description: '服务内部错误' });
          });
      });
      http.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject);
        http.listen(config.HTTP_PORT, '0.0.0.0', () => resolve());
      });
      httpPort = (http.address() as AddressInfo).port;
      stack.add(
        () =>
          new Promise<void>((resolve) => {
            http.close(() => resolve());
            http.closeAllConnections();
          }),
      );

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
      const poller = { tick: () => Promise.all(pollers.map((p) => p.tick())).then(() => undefined) };
      pollOnce = () => poller.tick();
      if (config.TASKS_POLLER === 'true') {
        let running: Promise<void> | undefined;
        const timer = setInterval(() => {
          if (running) return;
          running = poller
            .tick()
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
      // Retention of finished task records: a pass at start and hourly (data/task-retention.ts).
      await ensureRetentionIndexes(conn);
      const retention = taskRetention(conn, logger, () => options.number('TaskRetentionDays', 0));
      const runRetention = () => void retention.run().catch((err) => logger.warn({ err }, 'task retention failed'));
      const retentionTimer = setInterval(runRetention, config.TASKS_CLEANUP_INTERVAL_MS);
      retentionTimer.unref();
      stack.add(() => clearInterval(retentionTimer));
      runRetention();

      const ops = await listen(createOpsApp({ mongo: () => pingMongo(conn) }), config.METRICS_PORT);
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort, metricsPort: ops.port }, 'tasks service started');
    },
    stop: () => stack.run(),
  };
}
