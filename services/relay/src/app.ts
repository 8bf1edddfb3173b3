import {
  type App,
  connectRedis,
  createKafka,
  createPublisher,
  type Logger,
  listen,
  pingRedis,
  startGrpcServer,
  stopStack,
} from '@aigw/common';
import type { Config } from './config.ts';
import { createRelayServer } from './transport/http/server.ts';

/** The relay's composition root: stateless, caches in memory, shared rate limits in Redis. */
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
      const redis = await connectRedis(config.REDIS_URL);
      stack.add(() => redis.quit());
      const kafka = createKafka(config.KAFKA_BROKERS, 'relay', logger);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const http = await listen(createRelayServer({ readiness: { redis: () => pingRedis(redis) } }), config.HTTP_PORT);
      httpPort = http.port;
      stack.add(() => http.close());
      logger.info({ httpPort, grpcPort }, 'relay started');
    },
    stop: () => stack.run(),
  };
}
