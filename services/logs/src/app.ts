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
  type Logger,
  listen,
  pingMongo,
  service,
  stallNotification,
  startGrpcServer,
  stopStack,
  topicName,
} from '@aigw/common';
import { LogsService } from '@aigw/proto/logs/v1/logs';
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { EXPORT_MAX_MS } from './data/log-export.ts';
import { openLogStore } from './data/log-stores.ts';
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
      // The store's kind (MONGO_FLAVOR): FerretDB's read model, or MongoDB's indexes.
      const repo = openLogStore(conn, config.MONGO_FLAVOR);
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
      // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
      const stallAlert = adminAlerts(options, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
      stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('logs', name, h))));
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

      // Logs of the single collection older versions wrote: their pending buckets folded, then
      // the logs brought into the store's shape, once, in the background (ferretdb: moved into the
      // day partitions and the lists, queries scan the partitions until then; mongodb: the other
      // flavor's partitions moved into the one collection).
      void (async () => {
        let folded = 0;
        for (let n = await repo.applyPending(); n > 0; n = await repo.applyPending()) folded += n;
        if (folded > 0) logger.info({ logs: folded }, 'older pending logs folded into buckets');
        const moved = await repo.adopt();
        const into = repo.flavor === 'mongodb' ? 'the plain store' : 'the day partitions and the lists';
        if (moved > 0) logger.info({ logs: moved, flavor: repo.flavor }, `older logs moved into ${into}`);
      })().catch((err) => logger.warn({ err }, 'moving older logs failed'));

      // Retention and the history cut: a pass at start, after each DELETE /api/log/, and hourly.
      const cleanup = repo.cleaner(logger, () => ({
        consume: options.number('LogConsumeRetentionDays', 0),
        error: options.number('LogErrorRetentionDays', 0),
        system: options.number('LogSystemRetentionDays', 0),
      }));
      const runCleanup = () => void cleanup.run().catch(() => undefined);
      const timer = setInterval(runCleanup, config.LOG_CLEANUP_INTERVAL_MS);
      timer.unref();
      stack.add(() => clearInterval(timer));
      runCleanup();
      // The store's background work (ferretdb: each closed hour's and day's cubes).
      const cubing = repo.jobs(logger, config.LOG_CUBE_INTERVAL_MS);
      cubing.start();
      stack.add(() => cubing.stop());

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(LogsService, logsHandlers(logsService(repo, { afterCut: runCleanup })))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
        // Connections are still recycled every 5 minutes, but a call in flight (an export of
        // millions of rows takes many minutes) may finish on the old one.
        serverOptions: { 'grpc.max_connection_age_grace_ms': EXPORT_MAX_MS },
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
