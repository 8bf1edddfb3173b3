import type { AddressInfo } from 'node:net';
import {
  type App,
  adminAlerts,
  connectRedis,
  consumerRegistry,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublisher,
  ensureTopics,
  type Logger,
  listen,
  renewRelayLease,
  service,
  stallNotification,
  startGrpcServer,
  stopStack,
  topicName,
  trustedProxies,
} from '@aigw/common';
import { messageTraceHeaders, tracingActive } from '@aigw/common/telemetry';
import { PricingService, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { LogType } from '@aigw/proto/common/v1/common';
import { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { affinitySettings, channelAffinityStore } from './data/channel-affinity-store.ts';
import { identityCaches } from './data/identity-caches.ts';
import { rateLimiter } from './data/rate-limiter.ts';
import { channelSnapshot, pricingData } from './data/routing-data.ts';
import { settleLagWatch } from './data/settle-lag.ts';
import { createTokenizer } from './data/tokenizer.ts';
import { createUpstreamHttp } from './data/upstream-http.ts';
import { upstreamState } from './data/upstream-state.ts';
import { openUsageSpool } from './data/usage-spool.ts';
import { balanceView, walletPort } from './data/wallet.ts';
import { useFailoverOptions } from './domain/exchange/failure.ts';
import { outputLimits } from './domain/output-limits.ts';
import type { Ratios } from './domain/pricing.ts';
import { RelayError } from './domain/relay-error.ts';
import type { HealthRecord, RelayDeps, UsageRecord } from './domain/relay-request.ts';
import { sensitiveScreen } from './domain/sensitive-words.ts';
import { relayAdminHandlers } from './transport/grpc/relay-admin.ts';
import { leaseFence } from './transport/http/lease-fence.ts';
import { providerOf, relayMetrics } from './transport/http/metrics.ts';
import { realtimeServer } from './transport/http/realtime-ws.ts';
import { newRequestId, relayRoutes } from './transport/http/relay-routes.ts';
import { createRelayServer } from './transport/http/server.ts';
import { sessionReader } from './transport/http/session.ts';
import { followEntityChanges } from './transport/kafka/entity-events.ts';
import { relayEvents } from './transport/kafka/relay-events.ts';

/** Whether the ModelPriceTiers option holds any model (most deployments: none, no copy per request). */
function hasTiers(tiers: Record<string, unknown>): boolean {
  if (!tiers || typeof tiers !== 'object') return false;
  for (const _ in tiers) return true;
  return false;
}

const RATIO_KEYS = new Set([
  'ModelRatio',
  'CompletionRatio',
  'ModelPrice',
  'GroupRatio',
  'CacheRatio',
  'CacheCreationRatio',
  'CreateCacheRatio',
  'AudioRatio',
  'AudioCompletionRatio',
  'ImageRatio',
]);

/**
 * The relay's composition root: stateless; tokens, users, channels and ratios cached in memory
 * (kept current by events), shared rate limits in Redis, usage and channel health to Kafka.
 * Stop order: not ready, serve on briefly (balancers notice), stop accepting, drain in-flight
 * requests, flush usage events, close clients.
 */
export async function createApp(
  config: Config,
  logger: Logger,
): Promise<App & { httpPort(): number; grpcPort(): number }> {
  const stack = stopStack();
  let httpPort = 0;
  let grpcPort = 0;
  return {
    httpPort: () => httpPort,
    grpcPort: () => grpcPort,
    async start() {
      const tokenizer = createTokenizer();
      stack.add(() => tokenizer.close());
      const redis = await connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX, logger);
      stack.add(() => redis.quit());
      // This process's lease (its id prefixes its request ids): renewed until everything else has
      // stopped; once it lapses billing gives back the holds it left (docs/reliability.md). Not
      // renewed for half the lapse, the requests holding a reservation are ended first.
      const fence = leaseFence();
      const lease = renewRelayLease(redis, newRequestId().split('-')[0] as string, undefined, {
        fenceMs: config.RELAY_LEASE_FENCE_MS,
        onFence: (fenced) => {
          if (!fenced) return logger.info('relay lease renewed again');
          const cut = fence.cutHeld();
          logger.error(
            { cut, fenceMs: config.RELAY_LEASE_FENCE_MS },
            'relay lease not renewed: ended the requests holding a reservation before billing gives their holds back',
          );
          relayMetrics().leaseFenced(cut);
        },
      });
      stack.add(() => lease.stop());
      const kafka = createKafka(config.KAFKA_BROKERS, 'relay', logger);
      await ensureTopics(kafka, [
        topicName(TOPICS.usage),
        topicName(TOPICS.channelHealth),
        topicName(TOPICS.entityChanged),
        topicName(TOPICS.optionChanged),
      ]);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());

      // Channelz bookkeeping and grpc-js's retry layer cost CPU on every call; the relay's own
      // retries (wallet.ts) and metrics cover what they would add.
      const lean = { channelOptions: { 'grpc.enable_channelz': 0, 'grpc.enable_retries': 0 } };
      const users = createClient(UsersService, config.USERS_ADDR, lean);
      const optionsClient = createClient(OptionsService, config.USERS_ADDR, lean);
      const channelsClient = createClient(ChannelsService, config.CHANNELS_ADDR, lean);
      const tokens = createClient(TokensService, config.BILLING_ADDR, lean);
      const wallet = createClient(WalletService, config.BILLING_ADDR, lean);
      const pricing = createClient(PricingService, config.BILLING_ADDR, lean);
      stack.add(() => {
        for (const c of [users, optionsClient, channelsClient, tokens, wallet, pricing]) c.close();
      });

      const options = await createOptionsCache({ source: optionsClient, kafka, publisher, logger, service: 'relay' });
      stack.add(() => options.stop());
      const snapshot = channelSnapshot(channelsClient, logger, config.RELAY_SNAPSHOT_REFRESH_MS);
      const ratios = pricingData(pricing, logger, config.RELAY_SNAPSHOT_REFRESH_MS);
      stack.add(() => {
        snapshot.stop();
        ratios.stop();
      });
      await Promise.all([snapshot.reload(), ratios.reload()]);
      options.onChange((key) => {
        if (RATIO_KEYS.has(key)) ratios.invalidate();
      });
      useFailoverOptions((key) => options.text(key));

      const identities = identityCaches({ tokens, users, ttlMs: config.RELAY_CACHE_TTL_MS });
      const settleLag = settleLagWatch({
        redis,
        logger,
        maxLagMs: config.RELAY_SETTLE_MAX_LAG_MS,
        maxLagEvents: config.RELAY_SETTLE_MAX_LAG_EVENTS,
      });
      stack.add(() => settleLag.stop());
      const balances = balanceView({
        wallet,
        ttlMs: config.RELAY_BALANCE_TTL_MS,
        factor: config.RELAY_TRUST_FACTOR,
        // Beyond this after a request finished, billing has settled it (while settles keep up).
        horizonMs: 2 * config.RELAY_SETTLE_MAX_LAG_MS + config.RELAY_USAGE_LINGER_MS + 3_000,
        settleBehind: settleLag.behind,
        spend: identities.spend,
      });
      const outputLimit = outputLimits(config.RELAY_OUTPUT_LIMITS, config.RELAY_DEFAULT_OUTPUT_LIMIT);
      const entities = await followEntityChanges({
        kafka,
        publisher,
        logger,
        handlers: {
          token: (key, id) => identities.dropToken(key, id),
          user: (id) => {
            identities.dropUser(id);
            balances.drop(id);
          },
          channel: () => snapshot.invalidate(),
        },
      });
      stack.add(() => entities.stop());

      const events = relayEvents(publisher, logger, {
        lingerMs: config.RELAY_USAGE_LINGER_MS,
        maxBuffered: config.RELAY_USAGE_BUFFER_MAX,
        ...(config.RELAY_USAGE_SPOOL_DIR ? { spool: openUsageSpool(config.RELAY_USAGE_SPOOL_DIR, logger) } : {}),
      });
      const upstream = createUpstreamHttp({ timeoutMs: config.RELAY_UPSTREAM_TIMEOUT_MS });
      stack.add(() => upstream.close());
      const limiter = rateLimiter(
        redis,
        {
          tokenRpm: config.RELAY_TOKEN_RPM,
          tokenTpm: config.RELAY_TOKEN_TPM,
          userRpm: config.RELAY_USER_RPM,
          userTpm: config.RELAY_USER_TPM,
        },
        '',
        (err) => logger.warn({ err }, 'rate limits not checked (Redis unavailable): allowing requests'),
        // new-api's model request limits, read per request (off: one option lookup).
        () =>
          options.bool('ModelRequestRateLimitEnabled')
            ? {
                enabled: true,
                minutes: options.number('ModelRequestRateLimitDurationMinutes'),
                total: options.number('ModelRequestRateLimitCount'),
                success: options.number('ModelRequestRateLimitSuccessCount'),
                groups: options.json<Record<string, unknown>>('ModelRequestRateLimitGroup'),
              }
            : undefined,
      );
      const metrics = relayMetrics();
      const tracing = tracingActive();
      const usageTopic = topicName(TOPICS.usage);
      const rawWallet = walletPort(wallet, logger);
      /** Labels of a finished request: the model as configured for the caller's group, else "other". */
      const labelsOf = (rec: UsageRecord | HealthRecord, model: string, group: string) => {
        const index = snapshot.current();
        return {
          model: model && index.has(group, model) ? model : 'other',
          provider: providerOf(rec.channelId ? index.byId(rec.channelId)?.type : undefined),
        };
      };
      let merged: { base: Ratios; priceTiers: unknown; groupGroupRatio: unknown; ratios: Ratios } | undefined;
      const pipeline: RelayDeps = {
        upstream,
        channels: () => snapshot.current(),
        // The first thing a request reads: while the usage buffer is full (Kafka down for long),
        // refuse it before anything is spent rather than serve what could not be billed; and
        // before the first channels and ratios arrived (billing or channels still starting), an
        // empty copy would answer 模型倍率未配置 or 无可用渠道: an outage to retry, not an answer.
        ratios: () => {
          if (events.full()) throw new RelayError(503, '服务繁忙，请稍后重试', 'usage_buffer_full');
          if (!ratios.loaded() || !snapshot.loaded())
            throw new RelayError(503, '服务繁忙，请稍后重试', 'snapshot_not_loaded');
          // Long-context tiers straight from the options (parsed once per change); pricing.ts checks them.
          // GroupGroupRatio likewise; the copy is made once per change of any of the three.
          const priceTiers = options.json<Record<string, unknown>>('ModelPriceTiers');
          const groupGroupRatio = options.json<Record<string, Record<string, number>>>('GroupGroupRatio');
          const base = ratios.current();
          if (!hasTiers(priceTiers) && !hasTiers(groupGroupRatio)) return base;
          if (merged?.base !== base || merged.priceTiers !== priceTiers || merged.groupGroupRatio !== groupGroupRatio)
            merged = { base, priceTiers, groupGroupRatio, ratios: { ...base, priceTiers, groupGroupRatio } };
          return merged.ratios;
        },
        settings: {
          retryTimes: () => options.number('RetryTimes'),
          preConsumedQuota: () => options.number('PreConsumedQuota'),
          quotaPerUnit: () => options.number('QuotaPerUnit'),
          firstTokenTimeoutMs: () => config.RELAY_FIRST_TOKEN_TIMEOUT_MS,
          outputLimit,
          unpricedModelRatio: () => {
            if (!options.bool('UnpricedModelsEnabled')) return undefined;
            const r = options.number('DefaultModelRatio');
            return Number.isFinite(r) && r >= 0 ? r : undefined;
          },
        },
        wallet: {
          async preConsume(req) {
            const t0 = performance.now();
            try {
              // The lease age lets billing tell this process's holds from a live one's once it lapses.
              const res = await rawWallet.preConsume({ ...req, leaseAgeMs: lease.age() });
              fence.held(req.requestId);
              return res;
            } finally {
              metrics.preConsume((performance.now() - t0) / 1000);
            }
          },
          refund: (requestId, userId) => rawWallet.refund(requestId, userId),
        },
        balances,
        tokenizer,
        usage: (rec) => {
          const { model, provider } = labelsOf(rec, rec.model, rec.caller.group);
          const u = rec.usage;
          if (rec.type === LogType.CONSUME)
            metrics.usage(
              model,
              provider,
              u.promptTokens,
              u.completionTokens,
              u.cachedTokens ?? 0,
              rec.isStream ? { firstTokenMs: rec.firstTokenMs, totalMs: rec.useTimeMs } : undefined,
            );
          metrics.retries(rec.channelsTried.length - 1);
          events.usage(rec, tracing ? messageTraceHeaders(usageTopic) : undefined);
        },
        health: (rec) => {
          metrics.upstreamError(rec.channelId, rec.statusCode);
          events.health(rec);
        },
        countTokens: (caller, n) => {
          limiter.addTokens(caller.token?.id ?? 0, caller.user.id, n, caller.token?.tpmLimit ?? 0);
          limiter.success(caller.user.id, caller.group);
        },
        state: upstreamState(redis, logger),
        affinity: channelAffinityStore(redis, logger, () => affinitySettings(options)),
      };

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(RelayAdminService, relayAdminHandlers({ upstream, channels: () => snapshot.current() }))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;

      // Readiness and liveness (consumers that stopped consuming) on the ops port only. Not Redis:
      // without it the relay still serves (rate limits fail open, every request pre-consumes; only
      // /pg sessions are refused), and a Redis outage must not take every replica out of service.
      let draining = false;
      const consumers = consumerRegistry();
      consumers.add('options', options);
      // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
      const stallAlert = adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
      stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('relay', name, h))));
      consumers.add('entities', entities);
      const http = createRelayServer({ logger });
      stack.add(metrics.inflightFrom(http.inflight));
      const ops = await listen(
        createOpsApp(
          {
            consumers: consumers.readiness,
            usageBuffer: async () => {
              if (events.full()) throw new Error(`usage buffer full (${events.buffered()} events waiting for Kafka)`);
            },
            draining: async () => {
              if (draining) throw new Error('draining: finishing the requests in flight');
            },
            snapshots: async () => {
              if (!snapshot.loaded()) throw new Error('channels not loaded yet');
              if (!ratios.loaded()) throw new Error('ratios not loaded yet');
            },
          },
          { consumers: consumers.liveness },
        ),
        config.METRICS_PORT,
      );
      const screen = sensitiveScreen(options);
      const dispatch = relayRoutes({
        pipeline,
        identities,
        options,
        limiter,
        session: sessionReader(redis, config.SESSION_SECRET),
        logger,
        trustedProxy: trustedProxies(config.TRUSTED_PROXIES),
        maxBodyBytes: config.RELAY_MAX_BODY_BYTES,
        maxJsonBytes: config.RELAY_MAX_JSON_BYTES,
        track: http.track,
        fence,
        screen: screen.check,
        walletOf: async (userId) => {
          const w = (await wallet.getWallet({ userId })).wallet;
          return { quota: w?.quota ?? 0, usedQuota: w?.usedQuota ?? 0 };
        },
      });
      http.attach(dispatch);
      // /v1/realtime (WebSocket); other upgrade requests are not served.
      const realtime = realtimeServer({
        pipeline,
        identities,
        options,
        limiter,
        logger,
        trustedProxy: trustedProxies(config.TRUSTED_PROXIES),
        screen: screen.check,
        fence,
      });
      http.server.on('upgrade', (req, socket, head) => {
        if (!realtime.handleUpgrade(req, socket, head))
          socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      });
      await new Promise<void>((resolve, reject) => {
        http.server.once('error', reject);
        http.server.listen(config.HTTP_PORT, '0.0.0.0', () => resolve());
      });
      httpPort = (http.server.address() as AddressInfo).port;
      // Last in, first out: not ready any more, yet still serving (each answer with
      // Connection: close) for RELAY_DRAIN_DELAY_MS so that load balancers see the 503 before the
      // listener closes; then stop accepting and drain streams (until RELAY_DRAIN_MS after the
      // stop began), flush usage, then the rest closes. The ops port (/metrics, /readyz) stays up
      // while the streams drain.
      stack.add(() => ops.close());
      stack.add(() => events.stop());
      stack.add(() => grpc.stop(5_000));
      stack.add(() => http.drain({ delayMs: config.RELAY_DRAIN_DELAY_MS, graceMs: config.RELAY_DRAIN_MS }));
      stack.add(() => {
        draining = true;
      });
      // First on stop: realtime sessions have no end of their own to wait for (1001 to each client).
      stack.add(() => realtime.close());
      logger.info({ httpPort, grpcPort }, 'relay started');
    },
    stop: () => stack.run(),
  };
}
