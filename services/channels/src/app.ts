import {
  type App,
  adminAlerts,
  connectMongo,
  consumerRegistry,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublisher,
  ensureTopics,
  keyCipher,
  type Logger,
  listen,
  pingMongo,
  previousSecrets,
  service,
  stallNotification,
  startGrpcServer,
  stopStack,
  topicName,
} from '@aigw/common';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { abilityRepository } from './data/ability-repository.ts';
import { channelRepository } from './data/channel-repository.ts';
import { modelMetaRepository } from './data/model-meta-repository.ts';
import { seenEvents } from './data/seen-events.ts';
import { channelHealth } from './domain/channel-health.ts';
import { channelsService } from './domain/channels-service.ts';
import { modelCatalogue } from './domain/model-meta.ts';
import { resealChannelKeys } from './domain/reseal-keys.ts';
import { httpFetch, upstreamSync } from './domain/upstream-sync.ts';
import { channelsHandlers } from './transport/grpc/channels-handlers.ts';
import { modelMetaHandlers } from './transport/grpc/model-meta-handlers.ts';
import { relayTester } from './transport/grpc/relay-tester.ts';
import { channelChangePublisher, runHealthConsumer, runUsageConsumer } from './transport/kafka/channel-events.ts';

type Stack = ReturnType<typeof stopStack>;
type Stores = Awaited<ReturnType<typeof openStores>>;
type Peers = Awaited<ReturnType<typeof connectPeers>>;
type Domain = ReturnType<typeof buildDomain>;

/** The Mongo connection, the repositories with their indexes, and the key cipher. */
async function openStores(config: Config, logger: Logger, stack: Stack) {
  const cipher = keyCipher(
    config.CHANNEL_KEY_SECRET,
    'CHANNEL_KEY_SECRET',
    previousSecrets(config.CHANNEL_KEY_SECRET_PREVIOUS),
  );
  const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
  stack.add(() => conn.close());
  const channelRepo = channelRepository(conn);
  const abilityRepo = abilityRepository(conn);
  await channelRepo.ensureIndexes();
  await abilityRepo.ensureIndexes();
  const metaRepo = modelMetaRepository(conn);
  await metaRepo.ensureIndexes();
  // A rotation of CHANNEL_KEY_SECRET: keys sealed with an earlier secret are sealed again
  // (they are read meanwhile with the earlier secrets).
  if (config.CHANNEL_KEY_SECRET_PREVIOUS)
    void resealChannelKeys(channelRepo, cipher)
      .then((n) => logger.info({ resealed: n }, 'channel keys sealed with the current CHANNEL_KEY_SECRET'))
      .catch((err: unknown) => logger.error({ err }, 'channel key rotation failed; it runs again at the next start'));
  return { cipher, conn, channelRepo, abilityRepo, metaRepo };
}

/** Kafka (topics and the publisher), the users and relay clients, and the options cache. */
async function connectPeers(config: Config, logger: Logger, stack: Stack) {
  const kafka = createKafka(config.KAFKA_BROKERS, 'channels', logger);
  await ensureTopics(kafka, [
    topicName(TOPICS.entityChanged),
    topicName(TOPICS.channelHealth),
    topicName(TOPICS.usage),
  ]);
  const publisher = await createPublisher(kafka);
  stack.add(() => publisher.disconnect());

  const optionsClient = createClient(OptionsService, config.USERS_ADDR);
  const relay = createClient(RelayAdminService, config.RELAY_ADDR);
  stack.add(() => {
    optionsClient.close();
    relay.close();
  });
  const options = await createOptionsCache({
    source: optionsClient,
    kafka,
    publisher,
    logger,
    service: 'channels',
  });
  stack.add(() => options.stop());
  return { kafka, publisher, relay, options };
}

/** The use cases: channel administration, the model catalogue, the upstream sync and channel health. */
function buildDomain(config: Config, logger: Logger, stores: Stores, peers: Peers) {
  const { cipher, conn, channelRepo, abilityRepo, metaRepo } = stores;
  const { publisher, relay, options } = peers;
  const channels = channelsService({
    channels: channelRepo,
    abilities: abilityRepo,
    cipher,
    changed: channelChangePublisher(publisher),
  });
  const catalogue = modelCatalogue({
    ...metaRepo,
    enabledAbilities: () => abilityRepo.enabled(),
    channelsByIds: async (ids) => {
      const wanted = new Set(ids);
      return (await channelRepo.all()).filter((c) => wanted.has(c._id));
    },
    prices: () => ({
      modelPrice: options.json<Record<string, number>>('ModelPrice'),
      modelRatio: options.json<Record<string, number>>('ModelRatio'),
    }),
  });
  const sync = upstreamSync({
    ...metaRepo,
    missing: async () => (await catalogue.missing()).missing,
    fetch: httpFetch(config.SYNC_HTTP_TIMEOUT_SECONDS * 1000),
    base: config.SYNC_UPSTREAM_BASE,
  });
  const health = channelHealth({
    channels,
    tester: relayTester(relay),
    options,
    seen: seenEvents(conn, 'health'),
    alert: adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger),
  });
  return { channels, catalogue, sync, health };
}

/** The channel-health and usage consumers, and the monitor that re-tests auto-disabled channels. */
async function startBackground(
  config: Config,
  logger: Logger,
  stack: Stack,
  stores: Stores,
  peers: Peers,
  domain: Domain,
) {
  const { kafka, publisher } = peers;
  const { health } = domain;
  const consumer = await runHealthConsumer({ kafka, publisher, logger, health });
  stack.add(() => consumer.stop());
  const usage = await runUsageConsumer({
    kafka,
    publisher,
    logger,
    seen: seenEvents(stores.conn, 'usage'),
    addUsedQuota: (id, quota) => stores.channelRepo.addUsedQuota(id, quota),
  });
  stack.add(() => usage.stop());

  const monitor = setInterval(() => {
    health
      .retestDisabled()
      .then((n) => n > 0 && logger.info({ tested: n }, 'monitor re-tested auto-disabled channels'))
      .catch((err) => logger.warn({ err }, 'channel monitor failed'));
  }, config.CHANNEL_MONITOR_INTERVAL_SEC * 1000);
  monitor.unref();
  stack.add(() => clearInterval(monitor));
  return { consumer, usage };
}

/** The ops port: Mongo and the consumers in readiness and liveness; admins hear of a stalled consumer. */
async function startOps(
  config: Config,
  logger: Logger,
  stack: Stack,
  parts: { stores: Stores; peers: Peers; consumers: Awaited<ReturnType<typeof startBackground>> },
) {
  const { options } = parts.peers;
  const consumers = consumerRegistry();
  consumers.add('options', options);
  // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
  const stallAlert = adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
  stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('channels', name, h))));
  consumers.add('health', parts.consumers.consumer);
  consumers.add('usage', parts.consumers.usage);
  const ops = await listen(
    createOpsApp(
      { mongo: () => pingMongo(parts.stores.conn), consumers: consumers.readiness },
      { consumers: consumers.liveness },
    ),
    config.HTTP_PORT,
  );
  stack.add(() => ops.close());
  return ops;
}

/** The channels service's composition root: channels, abilities, tests and health over gRPC. */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const stores = await openStores(config, logger, stack);
      const peers = await connectPeers(config, logger, stack);
      const domain = buildDomain(config, logger, stores, peers);
      const consumers = await startBackground(config, logger, stack, stores, peers, domain);

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [
          service(ChannelsService, {
            ...channelsHandlers(domain.channels, domain.health),
            ...modelMetaHandlers(domain.catalogue, domain.sync),
          }),
        ],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const ops = await startOps(config, logger, stack, { stores, peers, consumers });
      logger.info({ grpcPort, httpPort: ops.port }, 'channels service started');
    },
    stop: () => stack.run(),
  };
}
