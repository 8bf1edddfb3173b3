import {
  type App,
  connectMongo,
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
import { runEventConsumer } from './transport/kafka/event-consumer.ts';

/**
 * The logs service: usage and audit events -> logs (idempotent by event id), consumption logs ->
 * hourly dashboard buckets (every DataExportInterval minutes while DataExportEnabled), and the
 * LogsService queries.
 */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB);
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

      const consumer = await runEventConsumer({
        kafka,
        publisher,
        logger,
        repo,
        flags: () => ({
          logConsume: options.get('LogConsumeEnabled') !== 'false',
          aggregate: options.get('DataExportEnabled') !== 'false',
        }),
      });
      stack.add(() => consumer.stop());

      // Dashboard buckets: folded every DataExportInterval minutes (or LOGS_DATA_FLUSH_MS).
      let flushing = false;
      let lastFlush = 0;
      const flush = setInterval(
        () => {
          const every = config.LOGS_DATA_FLUSH_MS || Math.max(1, options.number('DataExportInterval', 5)) * 60_000;
          if (flushing || Date.now() - lastFlush < every) return;
          flushing = true;
          lastFlush = Date.now();
          repo
            .applyPending()
            .catch((err) => logger.warn({ err }, 'dashboard aggregation failed; will retry'))
            .finally(() => {
              flushing = false;
            });
        },
        Math.min(1_000, config.LOGS_DATA_FLUSH_MS || 1_000),
      );
      flush.unref();
      stack.add(() => clearInterval(flush));

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(LogsService, logsHandlers(logsService(repo)))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const ops = await listen(createOpsApp({ mongo: () => pingMongo(conn) }), config.HTTP_PORT);
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort: ops.port }, 'logs service started');
    },
    stop: () => stack.run(),
  };
}
