import {
  type App,
  adminAlerts,
  type ConsumerHandle,
  connectMongo,
  connectRedis,
  consumerRegistry,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublisher,
  ensureTopics,
  type HasHealth,
  keyCipher,
  type Logger,
  listen,
  pingMongo,
  previousSecrets,
  redisLease,
  renewRelayLeaseFor,
  service,
  stallNotification,
  startGrpcServer,
  stopStack,
  topicName,
  watchRelayLeases,
} from '@aigw/common';
import {
  PricingService,
  RedemptionsService,
  RelayLeaseService,
  SubscriptionService,
  TokensService,
  TopupService,
  WalletService,
} from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { ledgerFoldStore } from './data/ledger-fold-store.ts';
import { ledgerRepository } from './data/ledger-repository.ts';
import { orderRepository } from './data/order-repository.ts';
import { planRepository } from './data/plan-repository.ts';
import { quotaWarningPorts } from './data/quota-warning-ports.ts';
import { redemptionRepository } from './data/redemption-repository.ts';
import { sliceRevokes } from './data/slice-revokes.ts';
import { subscriptionOrderRepository } from './data/subscription-order-repository.ts';
import { tokenRepository } from './data/token-repository.ts';
import { cardGateway } from './domain/card-gateway.ts';
import { paymentAlarms } from './domain/payment-mismatch.ts';
import { pricingService } from './domain/pricing-service.ts';
import { quotaWarnings, watchedLedger } from './domain/quota-warning.ts';
import { redemptionsService } from './domain/redemptions-service.ts';
import { subscriptionPayments } from './domain/subscription-payments.ts';
import { subscriptionService } from './domain/subscription-service.ts';
import { tokensService } from './domain/tokens-service.ts';
import { topupService } from './domain/topup-service.ts';
import { walletLedger } from './domain/wallet-ledger.ts';
import { walletService } from './domain/wallet-service.ts';
import { startLedgerFold } from './jobs/ledger-fold-job.ts';
import { redemptionsHandlers } from './transport/grpc/redemptions-handlers.ts';
import { relayLeaseHandlers } from './transport/grpc/relay-lease-handlers.ts';
import { subscriptionHandlers } from './transport/grpc/subscription-handlers.ts';
import { tokensHandlers } from './transport/grpc/tokens-handlers.ts';
import { pricingHandlers, topupHandlers } from './transport/grpc/topup-pricing-handlers.ts';
import { walletHandlers } from './transport/grpc/wallet-handlers.ts';
import { billingEvents } from './transport/kafka/billing-events.ts';
import { watchSettleLag } from './transport/kafka/settle-lag.ts';
import { topicRetentionMs } from './transport/kafka/usage-retention.ts';
import { runUsageSettleConsumer, settleGroupId } from './transport/kafka/usage-settle-consumer.ts';

const SYSTEM_ACTOR = { userId: 0, role: 100, username: 'billing' };

/** How often rows holding a token key in plain are looked for (TokenRepository.sweepLegacy). */
const LEGACY_SWEEP_MS = 5 * 60_000;

type Stack = ReturnType<typeof stopStack>;
type Mongo = Awaited<ReturnType<typeof connectMongo>>;
type Repositories = Awaited<ReturnType<typeof openRepositories>>;
type Domain = Awaited<ReturnType<typeof buildDomain>>;

/** Opens billing's collections and makes sure their indexes exist. */
async function openRepositories(conn: Mongo, config: Config) {
  const repos = {
    ledgerRepo: ledgerRepository(conn),
    tokenRepo: tokenRepository(
      conn,
      keyCipher(config.TOKEN_KEY_SECRET, 'TOKEN_KEY_SECRET', previousSecrets(config.TOKEN_KEY_SECRET_PREVIOUS)),
    ),
    codeRepo: redemptionRepository(conn),
    orderRepo: orderRepository(conn),
    planRepo: planRepository(conn),
    subOrderRepo: subscriptionOrderRepository(conn),
  };
  for (const repo of Object.values(repos)) await repo.ensureIndexes();
  return repos;
}

/** Keeps stored token keys sealed with the current TOKEN_KEY_SECRET: a reseal after a rotation, a periodic sweep of rows in plain. */
function maintainTokenKeys(tokenRepo: Repositories['tokenRepo'], config: Config, logger: Logger, stack: Stack): void {
  // A rotation of TOKEN_KEY_SECRET: tokens sealed with an earlier secret are sealed and
  // indexed again (lookups find them meanwhile through the earlier secrets' digests).
  if (config.TOKEN_KEY_SECRET_PREVIOUS)
    void tokenRepo
      .reseal()
      .then((n) => logger.info({ resealed: n }, 'token keys sealed with the current TOKEN_KEY_SECRET'))
      .catch((err: unknown) => logger.error({ err }, 'token key rotation failed; it runs again at the next start'));
  // Rows in plain written by a replica still on an earlier version (a rolling upgrade) are
  // migrated here, not by a scan on each unknown key.
  const sweep = setInterval(() => {
    tokenRepo
      .sweepLegacy()
      .then((n) => n > 0 && logger.info({ migrated: n }, 'token keys stored in plain migrated'))
      .catch((err: unknown) => logger.warn({ err }, 'token key sweep failed'));
  }, LEGACY_SWEEP_MS);
  sweep.unref();
  stack.add(() => clearInterval(sweep));
}

/** Connects Kafka, the publisher, users' options and channels' clients, the options cache and Redis. */
async function connectPeers(config: Config, logger: Logger, stack: Stack) {
  const kafka = createKafka(config.KAFKA_BROKERS, 'billing', logger);
  await ensureTopics(kafka, [topicName(TOPICS.audit), topicName(TOPICS.entityChanged), topicName(TOPICS.usage)]);
  const publisher = await createPublisher(kafka);
  stack.add(() => publisher.disconnect());

  const optionsClient = createClient(OptionsService, config.USERS_ADDR);
  const channels = createClient(ChannelsService, config.CHANNELS_ADDR);
  stack.add(() => {
    optionsClient.close();
    channels.close();
  });
  const options = await createOptionsCache({ source: optionsClient, kafka, publisher, logger, service: 'billing' });
  stack.add(() => options.stop());

  const redis = await connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX, logger);
  stack.add(() => redis.quit());
  return { kafka, publisher, optionsClient, channels, options, redis };
}

type Peers = Awaited<ReturnType<typeof connectPeers>>;

const HOUR_MS = 3_600_000;
/** The Redis key of the fold's lease (under REDIS_KEY_PREFIX): one folding replica at a time. */
const LEDGER_FOLD_LEASE_KEY = 'ledger-fold:lease';

/**
 * The wallet ledger fold, when LEDGER_FOLD is on: entries older than the horizon (LEDGER_FOLD_HORIZON_HOURS,
 * or the usage topic's retention + 24 h) fold into checkpoints, a pass a minute after start and then
 * every LEDGER_FOLD_INTERVAL_MS. Not at all when the usage topic keeps its events for ever.
 */
async function foldLedger(conn: Mongo, peers: Peers, config: Config, logger: Logger, stack: Stack): Promise<void> {
  if (config.LEDGER_FOLD !== 'true') return;
  let horizonMs = (config.LEDGER_FOLD_HORIZON_HOURS ?? 0) * HOUR_MS;
  if (!horizonMs) {
    const retention = await topicRetentionMs(peers.kafka, topicName(TOPICS.usage)).catch((err: unknown) => {
      logger.warn({ err }, 'could not read the usage topic retention');
      return null;
    });
    if (retention === null) {
      logger.warn(
        'wallet ledger fold off: the usage topic retention is unknown or unlimited (set LEDGER_FOLD_HORIZON_HOURS)',
      );
      return;
    }
    horizonMs = retention + 24 * HOUR_MS;
  }
  const job = startLedgerFold({
    store: ledgerFoldStore(conn),
    horizonMs,
    intervalMs: config.LEDGER_FOLD_INTERVAL_MS,
    firstMs: 60_000,
    logger,
    lease: {
      lease: redisLease(peers.redis, LEDGER_FOLD_LEASE_KEY, config.LEDGER_FOLD_LEASE_MS),
      ttlMs: config.LEDGER_FOLD_LEASE_MS,
    },
  });
  stack.add(() => job.stop());
  logger.info({ horizonHours: horizonMs / HOUR_MS }, 'wallet ledger fold on');
}

/** The per-user ledger, watched for relay leases that lapse and for quota warnings. */
function buildLedger(repos: Repositories, peers: Peers, config: Config, logger: Logger, stack: Stack) {
  const { redis, options } = peers;
  // Holds of a relay process whose lease lapsed (killed mid-request) are given back by the
  // user's next change instead of after HOLD_TTL_MS (request ids start with the process's id).
  const leases = watchRelayLeases(redis);
  stack.add(() => leases.stop());
  const ledgerOnly = walletLedger(repos.ledgerRepo, Date.now, {
    lapsed: (rid, heldAt, leaseAgeMs) => {
      const dash = rid.indexOf('-');
      return dash > 0 && leases.lapsed(rid.slice(0, dash), heldAt, leaseAgeMs);
    },
  });
  // Every balance a change leaves is checked against the user's quota warning threshold.
  const usersClient = createClient(UsersService, config.USERS_ADDR);
  stack.add(() => usersClient.close());
  const warnings = quotaWarnings(quotaWarningPorts({ redis, users: usersClient, options, logger }));
  return watchedLedger(ledgerOnly, (userId, balance) => warnings.observe(userId, balance));
}

/** Builds the use cases over the repositories, the ledger and the peers, and seeds the default ratios. */
async function buildDomain(repos: Repositories, peers: Peers, config: Config, logger: Logger, stack: Stack) {
  const { options, optionsClient, channels } = peers;
  const events = billingEvents(peers.publisher);
  const ledger = buildLedger(repos, peers, config, logger, stack);
  const tokens = tokensService({ repo: repos.tokenRepo, ledger, events, options });
  // A hold refused while the user's wallet slices hold the balance asks their relays to give them back.
  const slices = sliceRevokes(peers.redis, config.REDIS_KEY_PREFIX, logger);
  const wallet = walletService({ ledger, tokenLimit: (id) => tokens.limitOf(id), events, options, slices });
  const codes = redemptionsService({ repo: repos.codeRepo, wallet, options });
  const subscriptions = subscriptionService({
    plans: repos.planRepo,
    ledger,
    events,
    options,
    groups: () => Object.keys(options.json<Record<string, number>>('GroupRatio') ?? {}),
  });
  const card = cardGateway({
    options,
    api: { stripeBase: config.STRIPE_API_BASE, creemBase: config.CREEM_API_BASE },
  });
  const alarms = paymentAlarms({ logger, events });
  const subscriptionPay = subscriptionPayments({ orders: repos.subOrderRepo, subscriptions, options, card, alarms });
  const topup = topupService({ orders: repos.orderRepo, wallet, options, card, plans: subscriptionPay, alarms });
  const pricing = pricingService({
    options,
    writeOption: async (key, value) => {
      const res = await optionsClient.updateOption({ actor: SYSTEM_ACTOR, key, value });
      options.apply(key, res.option?.value ?? value, res.version);
    },
    modelGroups: async () => (await channels.listModelGroups({})).items,
  });
  const seeded = await pricing.seedDefaults().catch((err) => {
    logger.warn({ err }, 'could not seed the default ratios');
    return [];
  });
  if (seeded.length > 0) logger.info({ seeded }, 'seeded default ratios');
  return { tokens, wallet, codes, subscriptions, subscriptionPay, topup, pricing };
}

/** Serves the seven billing gRPC services. */
function serveGrpc(domain: Domain, peers: Peers, config: Config, logger: Logger) {
  return startGrpcServer({
    port: config.GRPC_PORT ?? 0,
    services: [
      service(WalletService, walletHandlers(domain.wallet)),
      service(TokensService, tokensHandlers(domain.tokens)),
      service(RedemptionsService, redemptionsHandlers(domain.codes)),
      service(TopupService, topupHandlers(domain.topup)),
      service(SubscriptionService, subscriptionHandlers(domain.subscriptions, domain.subscriptionPay)),
      service(PricingService, pricingHandlers(domain.pricing, peers.options)),
      // Relays cut off from Redis renew their lease through billing (docs/security.md).
      service(
        RelayLeaseService,
        relayLeaseHandlers((renewal, ms) => renewRelayLeaseFor(peers.redis, renewal, ms)),
      ),
    ],
    onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
  });
}

/** Starts the ops HTTP server: readiness (Mongo, consumers), liveness, and a stall alert to admins. */
async function serveOps(
  conn: Mongo,
  peers: Peers,
  settler: ConsumerHandle,
  config: Config,
  logger: Logger,
  stack: Stack,
): Promise<{ port: number }> {
  const consumers = consumerRegistry();
  consumers.add('options', peers.options);
  // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
  const stallAlert = adminAlerts(peers.options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
  stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('billing', name, h))));
  // runConsumer/runBatchConsumer hand back a ConsumerHandle; the settle module's own return
  // type does not say so yet.
  if ('health' in settler) consumers.add('settle', settler as HasHealth);
  const ops = await listen(
    createOpsApp({ mongo: () => pingMongo(conn), consumers: consumers.readiness }, { consumers: consumers.liveness }),
    config.HTTP_PORT,
  );
  stack.add(() => ops.close());
  return ops;
}

/** The billing service's composition root: wallets, tokens, codes, top-up and pricing over gRPC. */
export async function createApp(
  config: Config,
  logger: Logger,
): Promise<App & { grpcPort(): number; stopSettling(): Promise<void> }> {
  const stack = stopStack();
  let grpcPort = 0;
  let settler: ConsumerHandle | undefined;
  return {
    grpcPort: () => grpcPort,
    /** Stops the usage settle consumer only (tests of the backpressure; the lag keeps being measured). */
    stopSettling: async () => {
      await settler?.stop();
    },
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
      stack.add(() => conn.close());
      const repos = await openRepositories(conn, config);
      maintainTokenKeys(repos.tokenRepo, config, logger, stack);
      const peers = await connectPeers(config, logger, stack);
      const domain = await buildDomain(repos, peers, config, logger, stack);

      // The wallet API first: joining the settle group can take a Kafka session timeout (30 s)
      // after a crash, while the dead member is still counted, and relays need pre-consumes and
      // refunds meanwhile (the settle lag key is missing until the consumer runs, so relays
      // pre-consume every request until then).
      const grpc = await serveGrpc(domain, peers, config, logger);
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const { kafka, publisher, redis } = peers;
      settler = await runUsageSettleConsumer({ kafka, publisher, logger, wallet: domain.wallet });
      stack.add(() => settler?.stop());
      const lag = watchSettleLag({
        kafka,
        redis,
        topic: topicName(TOPICS.usage),
        groupId: settleGroupId(),
        logger,
        consuming: () => settler?.health().state === 'consuming',
      });
      stack.add(() => lag.stop());

      const repair = setInterval(() => {
        domain.codes.repair().catch((err) => logger.warn({ err }, 'redemption repair failed'));
      }, 60_000);
      repair.unref();
      stack.add(() => clearInterval(repair));

      await foldLedger(conn, peers, config, logger, stack);

      const ops = await serveOps(conn, peers, settler, config, logger, stack);
      logger.info({ grpcPort, httpPort: ops.port }, 'billing service started');
    },
    stop: () => stack.run(),
  };
}
