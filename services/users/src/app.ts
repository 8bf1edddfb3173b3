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
import { WalletService } from '@aigw/proto/billing/v1/billing';
import { TOPICS } from '@aigw/proto/topics';
import { PasskeysService } from '@aigw/proto/users/v1/passkeys';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { Config } from './config.ts';
import { billingWallet } from './data/billing-wallet.ts';
import { checkinRepository } from './data/checkin-repository.ts';
import { codeRepository } from './data/code-repository.ts';
import { optionRepository } from './data/option-repository.ts';
import { passkeyRepository } from './data/passkey-repository.ts';
import { smtpMailer } from './data/smtp-mailer.ts';
import { twoFactorRepository } from './data/two-factor-repository.ts';
import { indexAccessTokens, userModel, userRepository } from './data/user-repository.ts';
import { accounts } from './domain/accounts.ts';
import { checkins } from './domain/checkin.ts';
import { credits as createCredits } from './domain/credits.ts';
import { emailFlows } from './domain/email-flows.ts';
import { identities } from './domain/identities.ts';
import { notificationSettings } from './domain/notification-settings.ts';
import { optionsService } from './domain/options-service.ts';
import { passkeys } from './domain/passkeys.ts';
import { seedRoot } from './domain/seed-root.ts';
import { resealTotpSecrets, twoFactor } from './domain/two-factor.ts';
import { userAdmin } from './domain/user-admin.ts';
import { optionsHandlers } from './transport/grpc/options-handlers.ts';
import { passkeysHandlers } from './transport/grpc/passkeys-handlers.ts';
import { usersHandlers } from './transport/grpc/users-handlers.ts';
import { optionChangePublisher } from './transport/kafka/option-events.ts';
import { announcingUserStore } from './transport/kafka/user-events.ts';

type Stack = ReturnType<typeof stopStack>;
type Mongo = Awaited<ReturnType<typeof connectMongo>>;
type OptionsCache = Awaited<ReturnType<typeof createOptionsCache>>;

/** Indexes the users, replaces access tokens stored in plain by their digest, seeds root. */
async function prepareUsers(conn: Mongo, config: Config, logger: Logger): Promise<void> {
  const users = userModel(conn);
  await users.syncIndexes();
  const hashed = await indexAccessTokens(conn);
  if (hashed) logger.info({ hashed }, 'access tokens stored in plain replaced by their digest');
  const rootId = await seedRoot(conn, users, config.ROOT_PASSWORD);
  if (rootId) logger.warn({ rootId }, 'created root with the default password: change it');
}

/**
 * The options this service serves and the copy it reads itself: an in-memory copy like every
 * other service's, updated at once by its own writes and by events for the writes of other replicas.
 */
async function startOptions(
  conn: Mongo,
  kafka: ReturnType<typeof createKafka>,
  publisher: Awaited<ReturnType<typeof createPublisher>>,
  logger: Logger,
  stack: Stack,
) {
  const publishChange = optionChangePublisher(publisher);
  let applyLocally: (key: string, value: string, version: number) => void = () => {};
  const options = optionsService(optionRepository(conn), async (key, value, version) => {
    applyLocally(key, value, version);
    await publishChange(key, value, version);
  });
  const cache = await createOptionsCache({
    source: {
      listOptions: (req) => options.list(req.includeSecrets),
      listOptionChanges: (req) => options.changedSince(req.sinceVersion),
    },
    kafka,
    publisher,
    logger,
    service: 'users',
  });
  applyLocally = cache.apply;
  stack.add(() => cache.stop());
  return { options, cache };
}

/** TOTP secrets at rest; after a rotation (TOTP_KEY_SECRET_PREVIOUS) sealed again in the background. */
function totpSecrets(conn: Mongo, config: Config, logger: Logger) {
  const totpBox = keyCipher(
    config.TOTP_KEY_SECRET,
    'TOTP_KEY_SECRET',
    previousSecrets(config.TOTP_KEY_SECRET_PREVIOUS),
  );
  const totpStore = twoFactorRepository(conn);
  if (config.TOTP_KEY_SECRET_PREVIOUS)
    void resealTotpSecrets(totpStore, totpBox)
      .then((n) => logger.info({ resealed: n }, 'TOTP secrets sealed with the current TOTP_KEY_SECRET'))
      .catch((err: unknown) => logger.warn({ err }, 'could not seal the TOTP secrets again'));
  return { totpStore, totpBox };
}

/** The account use cases the users gRPC service serves, over the store that announces user changes. */
function buildUseCases(
  conn: Mongo,
  deps: { cache: OptionsCache; publisher: Awaited<ReturnType<typeof createPublisher>>; billing: BillingClient },
  config: Config,
  logger: Logger,
) {
  const { cache } = deps;
  const store = announcingUserStore(userRepository(conn), deps.publisher, logger);
  const codes = codeRepository(conn);
  const warn = (obj: object, msg: string) => logger.warn(obj, msg);
  const credits = createCredits({ users: store, wallet: billingWallet(deps.billing), options: cache, warn });
  const mailer = smtpMailer(cache, (err) => logger.warn({ err }, 'mail not sent'));
  const { totpStore, totpBox } = totpSecrets(conn, config, logger);
  const useCases = {
    accounts: accounts({ users: store, codes, options: cache, credits }),
    admin: userAdmin(store),
    email: emailFlows({ users: store, codes, mailer, options: cache, codeTtlMs: config.VERIFICATION_CODE_TTL_MS }),
    identities: identities({ users: store, options: cache, credits }),
    credits,
    twoFactor: twoFactor({
      store: totpStore,
      users: store,
      box: totpBox,
      options: cache,
    }),
    checkins: checkins({ users: store, store: checkinRepository(conn), options: cache, credits }),
    notifications: notificationSettings({
      users: store,
      mailer,
      send: { allowPrivate: config.NOTIFY_PRIVATE === 'true' },
    }),
  };
  return { store, useCases };
}

type BillingClient = ReturnType<typeof createWalletClient>;

/**
 * Billing may start after us: reconnect within seconds rather than grpc-js's default of up to
 * two minutes, so that pending credits go out soon after it is up.
 */
const createWalletClient = (config: Config) =>
  createClient(WalletService, config.BILLING_ADDR, {
    channelOptions: { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5000 },
  });

/** Delivers pending credits every CREDIT_RETRY_MS, and soon after start while billing may still be starting. */
function retryCredits(credits: { deliverAllPending(): Promise<unknown> }, config: Config, stack: Stack): void {
  const retry = setInterval(() => void credits.deliverAllPending(), config.CREDIT_RETRY_MS);
  retry.unref();
  stack.add(() => clearInterval(retry));
  // Billing may still be starting (the local stack starts it after us): try soon, then on the interval.
  for (const delay of [0, 3000, 10_000]) {
    const early = setTimeout(() => void credits.deliverAllPending(), delay);
    early.unref();
    stack.add(() => clearTimeout(early));
  }
}

/** Starts the ops HTTP server: readiness (Mongo, the options consumer), liveness, and a stall alert to admins. */
async function serveOps(
  conn: Mongo,
  cache: OptionsCache,
  config: Config,
  logger: Logger,
  stack: Stack,
): Promise<{ port: number }> {
  const consumers = consumerRegistry();
  consumers.add('options', cache);
  // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
  const stallAlert = adminAlerts(cache, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
  stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('users', name, h))));
  const ops = await listen(
    createOpsApp({ mongo: () => pingMongo(conn), consumers: consumers.readiness }, { consumers: consumers.liveness }),
    config.HTTP_PORT,
  );
  stack.add(() => ops.close());
  return ops;
}

/** The users service: accounts, identities and system options, over gRPC. */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
      stack.add(() => conn.close());
      await prepareUsers(conn, config, logger);

      const kafka = createKafka(config.KAFKA_BROKERS, 'users', logger);
      await ensureTopics(kafka, [topicName(TOPICS.optionChanged), topicName(TOPICS.entityChanged)]);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());
      const { options, cache } = await startOptions(conn, kafka, publisher, logger, stack);

      const billing = createWalletClient(config);
      stack.add(() => billing.close());
      const { store, useCases } = buildUseCases(conn, { cache, publisher, billing }, config, logger);
      retryCredits(useCases.credits, config, stack);

      const grpc = await startGrpcServer({
        port: config.GRPC_PORT ?? 0,
        services: [
          service(OptionsService, optionsHandlers(options)),
          service(UsersService, usersHandlers(useCases)),
          service(
            PasskeysService,
            passkeysHandlers(passkeys({ store: passkeyRepository(conn), users: store, options: cache })),
          ),
        ],
        onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
      });
      grpcPort = grpc.port;
      stack.add(() => grpc.stop());

      const ops = await serveOps(conn, cache, config, logger, stack);
      logger.info({ grpcPort, httpPort: ops.port }, 'users service started');
    },
    stop: () => stack.run(),
  };
}
