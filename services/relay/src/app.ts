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
  type LeasePath,
  type Logger,
  listen,
  type OptionsCache,
  type Redis,
  renewRelayLease,
  service,
  stallNotification,
  startGrpcServer,
  stopStack,
  subscribeSliceSignals,
  topicName,
  trustedProxies,
} from '@aigw/common';
import { PricingService, RelayLeaseService, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
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
import type { RelayDeps, WalletPort } from './domain/relay-request.ts';
import { sensitiveScreen } from './domain/sensitive-words.ts';
import { releaseWaiters, retryWhenRevoked } from './domain/slice-revokes.ts';
import { currentRatios, leasedWallet, outcomeSinks, processSlices, relaySettings } from './pipeline-deps.ts';
import { relayAdminHandlers } from './transport/grpc/relay-admin.ts';
import { type LeaseFence, leaseFence } from './transport/http/lease-fence.ts';
import { relayMetrics } from './transport/http/metrics.ts';
import { realtimeServer } from './transport/http/realtime-ws.ts';
import { newRequestId, type RouteDeps, relayRoutes } from './transport/http/relay-routes.ts';
import { createRelayServer } from './transport/http/server.ts';
import { sessionReader } from './transport/http/session.ts';
import { followEntityChanges } from './transport/kafka/entity-events.ts';
import { type RelayEvents, relayEvents } from './transport/kafka/relay-events.ts';

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
 * Channelz bookkeeping and grpc-js's retry layer cost CPU on every call; the relay's own retries
 * (wallet.ts) and metrics cover what they would add. One set of options: one channel per peer.
 */
const LEAN_CHANNEL = { channelOptions: { 'grpc.enable_channelz': 0, 'grpc.enable_retries': 0 } };

/** How the relay's lease renewal goes, for the logs (the path changes only with an outage). */
const LEASE_PATH_LOG: Record<LeasePath, string> = {
  redis: 'relay lease renewed in Redis again',
  peer: 'relay lease renewed through billing: this process cannot reach Redis',
  'peer-without-redis':
    'relay lease not renewed: neither this process nor billing reaches Redis (nothing lapses meanwhile; the fence waits)',
  'peer-redis-read-only':
    'relay lease not renewed: Redis refuses the writes of this process and of billing but serves reads (the lease can lapse; the fence goes on)',
};

/**
 * This process's lease (its id prefixes its request ids): renewed until everything else has
 * stopped, in Redis or, when that fails, through billing; once it lapses billing gives back the
 * holds it left (docs/reliability.md). Not renewed for half the lapse, the requests holding a
 * reservation are ended first.
 */
function relayLease(redis: Redis, config: Config, logger: Logger, fence: LeaseFence) {
  const billing = createClient(RelayLeaseService, config.BILLING_ADDR, LEAN_CHANNEL);
  const lease = renewRelayLease(redis, newRequestId().split('-')[0] as string, undefined, {
    fenceMs: config.RELAY_LEASE_FENCE_MS,
    viaPeer: async (renewal, deadlineMs) => {
      const res = await billing.renewRelayLease(renewal, { deadlineMs });
      return res.renewed ? 'renewed' : res.leasesReadable ? 'readable' : 'unreachable';
    },
    onPath: (path) => logger[path === 'redis' ? 'info' : 'warn']({ path }, LEASE_PATH_LOG[path]),
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
  return {
    ...lease,
    stop() {
      lease.stop();
      billing.close();
    },
  };
}

/**
 * The wallet slices when RELAY_WALLET_SLICES=1, swept for idle ones at half their idle time and
 * given back when billing asks (a hold refused while slices hold the balance: common/slice-signals.ts);
 * with them, the wallet whose refused pre-consumes wait for such a release and retry once.
 */
async function walletSliceSwitch(
  config: Config,
  wallet: WalletPort,
  events: RelayEvents,
  fence: LeaseFence,
  stack: ReturnType<typeof stopStack>,
  logger: Logger,
) {
  if (config.RELAY_WALLET_SLICES !== '1') return { wallet, slices: undefined };
  const slices = processSlices(config, wallet, events, fence, newRequestId);
  const sweep = setInterval(() => slices.sweep(), Math.max(25, config.RELAY_WALLET_SLICE_IDLE_MS / 2));
  sweep.unref();
  stack.add(() => clearInterval(sweep));
  const waiters = releaseWaiters();
  const signals = await subscribeSliceSignals(
    config.REDIS_URL,
    config.REDIS_KEY_PREFIX,
    (signal) => (signal.kind === 'revoke' ? slices.revoke(signal.userId) : waiters.released(signal.userId)),
    logger,
  );
  stack.add(() => signals.stop());
  return { wallet: retryWhenRevoked(wallet, waiters.wait), slices };
}

/** Kafka with the relay's topics, and its publisher. */
async function relayKafka(config: Config, logger: Logger) {
  const kafka = createKafka(config.KAFKA_BROKERS, 'relay', logger);
  await ensureTopics(kafka, [
    topicName(TOPICS.usage),
    topicName(TOPICS.channelHealth),
    topicName(TOPICS.entityChanged),
    topicName(TOPICS.optionChanged),
  ]);
  return { kafka, publisher: await createPublisher(kafka) };
}

/** The gRPC clients of the users, channels and billing services. */
function peerClients(config: Config) {
  const lean = LEAN_CHANNEL;
  const clients = {
    users: createClient(UsersService, config.USERS_ADDR, lean),
    options: createClient(OptionsService, config.USERS_ADDR, lean),
    channels: createClient(ChannelsService, config.CHANNELS_ADDR, lean),
    tokens: createClient(TokensService, config.BILLING_ADDR, lean),
    wallet: createClient(WalletService, config.BILLING_ADDR, lean),
    pricing: createClient(PricingService, config.BILLING_ADDR, lean),
  };
  return {
    ...clients,
    close() {
      for (const c of Object.values(clients)) c.close();
    },
  };
}

/** The shared rate limits (Redis) with new-api's model request limits, read per request (off: one option lookup). */
function relayLimiter(redis: Redis, config: Config, options: OptionsCache, logger: Logger) {
  return rateLimiter(
    redis,
    {
      tokenRpm: config.RELAY_TOKEN_RPM,
      tokenTpm: config.RELAY_TOKEN_TPM,
      userRpm: config.RELAY_USER_RPM,
      userTpm: config.RELAY_USER_TPM,
    },
    '',
    (err) => logger.warn({ err }, 'rate limits not checked (Redis unavailable): allowing requests'),
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
}

/**
 * Readiness and liveness (consumers that stopped consuming) on the ops port only. Not Redis:
 * without it the relay still serves (rate limits fail open, every request pre-consumes; only
 * /pg sessions are refused), and a Redis outage must not take every replica out of service.
 */
function opsServer(
  config: Config,
  consumers: ReturnType<typeof consumerRegistry>,
  events: RelayEvents,
  loaded: { snapshot: { loaded(): boolean }; ratios: { loaded(): boolean } },
  draining: () => boolean,
) {
  return listen(
    createOpsApp(
      {
        consumers: consumers.readiness,
        usageBuffer: async () => {
          if (events.full()) throw new Error(`usage buffer full (${events.buffered()} events waiting for Kafka)`);
        },
        draining: async () => {
          if (draining()) throw new Error('draining: finishing the requests in flight');
        },
        snapshots: async () => {
          if (!loaded.snapshot.loaded()) throw new Error('channels not loaded yet');
          if (!loaded.ratios.loaded()) throw new Error('ratios not loaded yet');
        },
      },
      { consumers: consumers.liveness },
    ),
    config.METRICS_PORT,
  );
}

/** The caches kept current by events, and the clients and streams they need (each stopped on stop). */
async function startCaches(config: Config, logger: Logger, stack: ReturnType<typeof stopStack>, redis: Redis) {
  const { kafka, publisher } = await relayKafka(config, logger);
  stack.add(() => publisher.disconnect());
  const clients = peerClients(config);
  stack.add(() => clients.close());
  const options = await createOptionsCache({ source: clients.options, kafka, publisher, logger, service: 'relay' });
  stack.add(() => options.stop());
  const snapshot = channelSnapshot(clients.channels, logger, config.RELAY_SNAPSHOT_REFRESH_MS);
  const ratios = pricingData(clients.pricing, logger, config.RELAY_SNAPSHOT_REFRESH_MS, () => options.version);
  stack.add(() => {
    snapshot.stop();
    ratios.stop();
  });
  await Promise.all([snapshot.reload(), ratios.reload()]);
  options.onChange((key) => {
    if (RATIO_KEYS.has(key)) ratios.invalidate();
  });
  useFailoverOptions((key) => options.text(key));
  const identities = identityCaches({
    tokens: clients.tokens,
    users: clients.users,
    ttlMs: config.RELAY_CACHE_TTL_MS,
  });
  const settleLag = settleLagWatch({
    redis,
    logger,
    maxLagMs: config.RELAY_SETTLE_MAX_LAG_MS,
    maxLagEvents: config.RELAY_SETTLE_MAX_LAG_EVENTS,
  });
  stack.add(() => settleLag.stop());
  /** Told of a user's wallet change outside requests (the wallet slices, once built). */
  const userChanged: ((userId: number) => void)[] = [];
  const balances = balanceView({
    wallet: clients.wallet,
    ttlMs: config.RELAY_BALANCE_TTL_MS,
    factor: config.RELAY_TRUST_FACTOR,
    // Beyond this after a request finished, billing has settled it (while settles keep up).
    horizonMs: 2 * config.RELAY_SETTLE_MAX_LAG_MS + config.RELAY_USAGE_LINGER_MS + 3_000,
    settleBehind: settleLag.behind,
    spend: identities.spend,
  });
  const entities = await followEntityChanges({
    kafka,
    publisher,
    logger,
    handlers: {
      token: (key, id) => identities.dropToken(key, id),
      user: (id) => {
        identities.dropUser(id);
        balances.drop(id);
        for (const f of userChanged) f(id);
      },
      channel: () => snapshot.invalidate(),
    },
  });
  stack.add(() => entities.stop());
  return { publisher, clients, options, snapshot, ratios, identities, balances, entities, userChanged };
}

/** The relay's routes and /v1/realtime (WebSocket) on its HTTP server; other upgrade requests are not served. */
function attachRoutes(
  http: ReturnType<typeof createRelayServer>,
  config: Config,
  parts: Pick<RouteDeps, 'pipeline' | 'identities' | 'options' | 'limiter' | 'logger' | 'fence'> & {
    redis: Redis;
    options: OptionsCache;
    wallet: ReturnType<typeof peerClients>['wallet'];
  },
) {
  const { pipeline, identities, options, limiter, logger, fence, wallet } = parts;
  const screen = sensitiveScreen(options);
  const trustedProxy = trustedProxies(config.TRUSTED_PROXIES);
  http.attach(
    relayRoutes({
      pipeline,
      identities,
      options,
      limiter,
      session: sessionReader(parts.redis, config.SESSION_SECRET),
      logger,
      trustedProxy,
      maxBodyBytes: config.RELAY_MAX_BODY_BYTES,
      maxJsonBytes: config.RELAY_MAX_JSON_BYTES,
      track: http.track,
      fence,
      screen: screen.check,
      walletOf: async (userId) => {
        const w = (await wallet.getWallet({ userId })).wallet;
        return { quota: w?.quota ?? 0, usedQuota: w?.usedQuota ?? 0 };
      },
    }),
  );
  const realtime = realtimeServer({
    pipeline,
    identities,
    options,
    limiter,
    logger,
    trustedProxy,
    screen: screen.check,
    fence,
  });
  http.server.on('upgrade', (req, socket, head) => {
    if (!realtime.handleUpgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
  });
  return realtime;
}

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
      const fence = leaseFence();
      const lease = relayLease(redis, config, logger, fence);
      stack.add(() => lease.stop());
      const { publisher, clients, options, snapshot, ratios, identities, balances, entities, userChanged } =
        await startCaches(config, logger, stack, redis);

      const events = relayEvents(publisher, logger, {
        lingerMs: config.RELAY_USAGE_LINGER_MS,
        maxBuffered: config.RELAY_USAGE_BUFFER_MAX,
        ...(config.RELAY_USAGE_SPOOL_DIR ? { spool: openUsageSpool(config.RELAY_USAGE_SPOOL_DIR, logger) } : {}),
      });
      const upstream = createUpstreamHttp({ timeoutMs: config.RELAY_UPSTREAM_TIMEOUT_MS });
      stack.add(() => upstream.close());
      const limiter = relayLimiter(redis, config, options, logger);
      const metrics = relayMetrics();
      const outputLimit = outputLimits(config.RELAY_OUTPUT_LIMITS, config.RELAY_DEFAULT_OUTPUT_LIMIT);
      const leased = leasedWallet(walletPort(clients.wallet, logger), lease, fence, metrics);
      const { wallet, slices } = await walletSliceSwitch(config, leased, events, fence, stack, logger);
      if (slices) userChanged.push((id) => slices.drop(id));
      const pipeline: RelayDeps = {
        upstream,
        channels: () => snapshot.current(),
        ratios: currentRatios(events, ratios, snapshot, options),
        settings: relaySettings(options, config, outputLimit),
        wallet,
        balances,
        ...(slices ? { slices } : {}),
        tokenizer,
        ...outcomeSinks(events, metrics, () => snapshot.current()),
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

      let draining = false;
      const consumers = consumerRegistry();
      consumers.add('options', options);
      // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
      const stallAlert = adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
      stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('relay', name, h))));
      consumers.add('entities', entities);
      const http = createRelayServer({ logger });
      stack.add(metrics.inflightFrom(http.inflight));
      const ops = await opsServer(config, consumers, events, { snapshot, ratios }, () => draining);
      const realtime = attachRoutes(http, config, {
        pipeline,
        identities,
        options,
        limiter,
        redis,
        logger,
        fence,
        wallet: clients.wallet,
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
      // After the drain, before the events' flush: what is left of the slices goes back.
      if (slices) stack.add(() => slices.closeAll(true));
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
