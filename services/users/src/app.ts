import {
  type App,
  connectMongo,
  createKafka,
  createOpsApp,
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
import { TOPICS } from '@aigw/proto/topics';
import { OptionsService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { optionRepository } from './data/option-repository.ts';
import { userModel } from './data/user-repository.ts';
import { optionsService } from './domain/options-service.ts';
import { seedRoot } from './domain/seed-root.ts';
import { optionsHandlers } from './transport/grpc/options-handlers.ts';
import { optionChangePublisher } from './transport/kafka/option-events.ts';

/** The users service: accounts, identities and system options, over gRPC. */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB);
      stack.add(() => conn.close());
      const users = userModel(conn);
      await users.syncIndexes();
      const rootId = await seedRoot(conn, users, config.ROOT_PASSWORD);
      if (rootId) logger.warn({ rootId }, 'created root with the default password: change it');

      const kafka = createKafka(config.KAFKA_BROKERS, 'users', logger);
      await ensureTopics(kafka, [topicName(TOPICS.optionChanged)]);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());

      const options = optionsService(optionRepository(conn), optionChangePublisher(publisher));
      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [service(OptionsService, optionsHandlers(options))],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const ops = await listen(createOpsApp({ mongo: () => pingMongo(conn) }), config.HTTP_PORT);
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort: ops.port }, 'users service started');
    },
    stop: () => stack.run(),
  };
}
