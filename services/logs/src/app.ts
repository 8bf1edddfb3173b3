import {
  type App,
  connectMongo,
  consumerRegistry,
  createClient,
  createKafka,
  createOpsApp,
  createOptionsCache,
  createPublisher,
  ensureTopics,
  type Logger,
  listen,
  pingMongo,
  service,
  startGrpcServer,
  stopStack,
  topicName,
} from '@aigw/common';
import { LogsService } from '@aigw/proto/logs/v1/logs';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { logRepository } from './data/log-repository.ts';
import { logsService } from './domain/logs-service.ts';
import { logsHandlers } from './transport/grpc/logs-handlers.ts';
import { runEventConsumers } from './transport/kafka/event-consumer.ts';

/**
 * The logs service: usage and audit events -> logs (idempotent by event id), consumption logs ->
 * hourly dashboard buckets as they are consumed (while DataExportEnabled), and the LogsService
 * queries. /readyz and /healthz follow the consumers (consumer-health.ts).
 */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
      stack.add(() => conn.close());
      const repo = logRepository(conn);
      await repo.ensureIndexes();

      const kafka = createKafka(config.KAFKA_BROKERS, 'logs', logger);
      await ensureTopics(kafka, [topicName(TOPICS.usage), topicName(TOPICS.audit), topicName(TOPICS.optionChanged)]);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());
      const optionsClient = createClient(OptionsService, config.USERS_ADDR);
      stack.add(() => optionsClient.close());
      const options = await createOptionsCache({ source: optionsClient, kafka, publisher, logger, service: 'logs' });
      stack.add(() => options.stop());

      const consumers = consumerRegistry();
      consumers.add('options', options);
      const events = await runEventConsumers({
        kafka,
        publisher,
        logger,
        repo,
        flags: () => ({
          logConsume: options.bool('LogConsumeEnabled'),
          aggregate: options.bool('DataExportEnabled'),
        }),
      });
      stack.add(() => events.stop());
      consumers.add('usage', events.usage);
      consumers.add('audit', events.audit);

      // Logs written before buckets were summed by the consumer: folded once, in the background.
      void repo
        .applyPending()
        .then((n) => n > 0 && logger.info({ logs: n }, 'older pending logs folded into buckets'))
        .catch((err) => logger.warn({ err }, 'folding older pending logs failed'));

      // Logs stored before the lists: listed once, in the background (queries scan until then);
      // then those stored before the dimensions (filtered queries walk wider scopes until then).
      void repo
        .buildLists()
        .then((n) => n > 0 && logger.info({ logs: n }, 'older logs added to the lists'))
        .then(() => repo.buildDimensions())
        .then((n) => n > 0 && logger.info({ logs: n }, 'older logs added to the model, channel, group and token lists'))
        .catch((err) => logger.warn({ err }, 'listing older logs failed'));

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(LogsService, logsHandlers(logsService(repo)))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const ops = await listen(
        createOpsApp(
          { mongo: () => pingMongo(conn), consumers: consumers.readiness },
          { consumers: consumers.liveness },
        ),
        config.HTTP_PORT,
      );
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort: ops.port }, 'logs service started');
    },
    stop: () => stack.run(),
  };
}
