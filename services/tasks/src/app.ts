import {
  type App,
  connectMongo,
  createKafka,
  createOpsApp,
  createPublicApp,
  createPublisher,
  type Logger,
  listen,
  pingMongo,
  startGrpcServer,
  stopStack,
} from '@aigw/common';
import type { Config } from './config.ts';
import { withJsonErrors } from './transport/http/errors.ts';

/** The tasks service's composition root. */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB);
      stack.add(() => conn.close());
      const kafka = createKafka(config.KAFKA_BROKERS, 'tasks', logger);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const http = await listen(withJsonErrors(createPublicApp(), logger), config.HTTP_PORT);
      stack.add(() => http.close());
      const ops = await listen(createOpsApp({ mongo: () => pingMongo(conn) }), config.METRICS_PORT);
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort: http.port, metricsPort: ops.port }, 'tasks service started');
    },
    stop: () => stack.run(),
  };
}
