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
  pingRedis,
  stallNotification,
  stopStack,
  topicName,
  trustedProxies,
} from '@aigw/common';
import {
  PricingService,
  RedemptionsService,
  SubscriptionService,
  TokensService,
  TopupService,
  WalletService,
} from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { LogsService } from '@aigw/proto/logs/v1/logs';
import { TOPICS } from '@aigw/proto/topics';
import { PasskeysService } from '@aigw/proto/users/v1/passkeys';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { proxyUpgrades } from './transport/http/proxy.ts';
import { createServer } from './transport/http/server.ts';
import { auditSink } from './transport/kafka/audit.ts';

/**
 * The gateway's composition root: Redis (sessions, rate limits), Kafka (option changes), gRPC
 * clients of the services behind /api, and the Express server.
 */
export async function createApp(config: Config, logger: Logger): Promise<App & { port(): number }> {
  const stack = stopStack();
  let boundPort = 0;
  return {
    port: () => boundPort,
    async start() {
      const redis = await connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX, logger);
      stack.add(() => redis.quit());
      const kafka = createKafka(config.KAFKA_BROKERS, 'gateway', logger);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());
      await ensureTopics(kafka, [topicName(TOPICS.audit)]);
      const users = createClient(UsersService, config.USERS_ADDR);
      const optionsClient = createClient(OptionsService, config.USERS_ADDR);
      const wallet = createClient(WalletService, config.BILLING_ADDR);
      const passkeys = createClient(PasskeysService, config.USERS_ADDR);
      const channels = createClient(ChannelsService, config.CHANNELS_ADDR);
      const billing = {
        tokens: createClient(TokensService, config.BILLING_ADDR),
        redemptions: createClient(RedemptionsService, config.BILLING_ADDR),
        topup: createClient(TopupService, config.BILLING_ADDR),
        pricing: createClient(PricingService, config.BILLING_ADDR),
        subscriptions: createClient(SubscriptionService, config.BILLING_ADDR),
      };
      // No keepalive pings: after the logs service recycles a connection (GOAWAY), grpc-js drops
      // every call on it at the next ping, and an export streams for minutes past that.
      const logs = createClient(LogsService, config.LOGS_ADDR, { channelOptions: { 'grpc.keepalive_time_ms': -1 } });
      stack.add(() => logs.close());
      stack.add(() => {
        users.close();
        optionsClient.close();
        wallet.close();
        channels.close();
        passkeys.close();
        for (const client of Object.values(billing)) client.close();
      });
      const options = await createOptionsCache({ source: optionsClient, kafka, publisher, logger, service: 'gateway' });
      stack.add(() => options.stop());
      const app = createServer({
        config,
        logger,
        redis,
        options,
        audit: auditSink(publisher),
        clients: { users, options: optionsClient, passkeys, wallet, channels, ...billing, logs },
      });
      const server = await listen(app, config.HTTP_PORT);
      boundPort = server.port;
      // WebSocket upgrades (/v1/realtime) pass to the relay like its HTTP routes.
      if (config.RELAY_HTTP_URL)
        proxyUpgrades(
          server.server,
          config.RELAY_HTTP_URL,
          trustedProxies(config.TRUSTED_PROXIES || config.TRUST_PROXY || ''),
        );
      stack.add(() => server.close());
      // Readiness and liveness (the options consumer) on the ops port only.
      const consumers = consumerRegistry();
      consumers.add('options', options);
      // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
      const stallAlert = adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
      stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('gateway', name, h))));
      const ops = await listen(
        createOpsApp(
          { redis: () => pingRedis(redis), consumers: consumers.readiness },
          { consumers: consumers.liveness },
        ),
        config.METRICS_PORT,
      );
      stack.add(() => ops.close());
      logger.info({ port: boundPort }, 'gateway listening');
    },
    stop: () => stack.run(),
  };
}
