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

/** The users service: accounts, identities and system options, over gRPC. */
export async function createApp(config: Config, logger: Logger): Promise<App & { grpcPort(): number }> {
  const stack = stopStack();
  let grpcPort = 0;
  return {
    grpcPort: () => grpcPort,
    async start() {
      const conn = await connectMongo(config.MONGO_URL, config.MONGO_DB, logger);
      stack.add(() => conn.close());
      const users = userModel(conn);
      await users.syncIndexes();
      const hashed = await indexAccessTokens(conn);
      if (hashed) logger.info({ hashed }, 'access tokens stored in plain replaced by their digest');
      const rootId = await seedRoot(conn, users, config.ROOT_PASSWORD);
      if (rootId) logger.warn({ rootId }, 'created root with the default password: change it');

      const kafka = createKafka(config.KAFKA_BROKERS, 'users', logger);
      await ensureTopics(kafka, [topicName(TOPICS.optionChanged), topicName(TOPICS.entityChanged)]);
      const publisher = await createPublisher(kafka);
      stack.add(() => publisher.disconnect());

      // The options this service reads itself: an in-memory copy like every other service's,
      // updated at once by its own writes and by events for the writes of other replicas.
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

      // Billing may start after us: reconnect within seconds rather than grpc-js's default of up to
      // two minutes, so that pending credits go out soon after it is up.
      const billing = createClient(WalletService, config.BILLING_ADDR, {
        channelOptions: { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5000 },
      });
      stack.add(() => billing.close());
      const store = announcingUserStore(userRepository(conn), publisher, logger);
      const codes = codeRepository(conn);
      const warn = (obj: object, msg: string) => logger.warn(obj, msg);
      const credits = createCredits({ users: store, wallet: billingWallet(billing), options: cache, warn });
      const mailer = smtpMailer(cache, (err) => logger.warn({ err }, 'mail not sent'));
      // TOTP secrets at rest; after a rotation (TOTP_KEY_SECRET_PREVIOUS) sealed again in the background.
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
      const retry = setInterval(() => void credits.deliverAllPending(), config.CREDIT_RETRY_MS);
      retry.unref();
      stack.add(() => clearInterval(retry));
      // Billing may still be starting (the local stack starts it after us): try soon, then on the interval.
      for (const delay of [0, 3000, 10_000]) {
        const early = setTimeout(() => void credits.deliverAllPending(), delay);
        early.unref();
        stack.add(() => clearTimeout(early));
      }

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

      const consumers = consumerRegistry();
      consumers.add('options', cache);
      // Admins hear of a consumer that stalls (AdminWebhookUrl), once per stall.
      const stallAlert = adminAlerts(cache, { allowPrivate: config.NOTIFY_PRIVATE === 'true' }, logger);
      stack.add(consumers.onStall((name, h) => stallAlert(stallNotification('users', name, h))));
      const ops = await listen(
        createOpsApp(
          { mongo: () => pingMongo(conn), consumers: consumers.readiness },
          { consumers: consumers.liveness },
        ),
        config.HTTP_PORT,
      );
      stack.add(() => ops.close());
      logger.info({ grpcPort, httpPort: ops.port }, 'users service started');
    },
    stop: () => stack.run(),
  };
}
