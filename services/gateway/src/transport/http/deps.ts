import type { Logger, OptionsCache, Redis, ServiceClient } from '@aigw/common';
import type {
  PricingService,
  RedemptionsService,
  SubscriptionService,
  TokensService,
  TopupService,
  WalletService,
} from '@aigw/proto/billing/v1/billing';
import type { ChannelsService } from '@aigw/proto/channels/v1/channels';
import type { LogsService } from '@aigw/proto/logs/v1/logs';
import type { PasskeysService } from '@aigw/proto/users/v1/passkeys';
import type { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { RequestHandler } from 'express';
import type { Config } from '../../config.ts';
import type { AuditSink } from '../kafka/audit.ts';
import type { Sessions } from './middleware/session.ts';

/** gRPC clients of the services behind /api. */
export interface Clients {
  users: ServiceClient<typeof UsersService>;
  options: ServiceClient<typeof OptionsService>;
  wallet: ServiceClient<typeof WalletService>;
  passkeys: ServiceClient<typeof PasskeysService>;
  channels: ServiceClient<typeof ChannelsService>;
  tokens: ServiceClient<typeof TokensService>;
  redemptions: ServiceClient<typeof RedemptionsService>;
  topup: ServiceClient<typeof TopupService>;
  pricing: ServiceClient<typeof PricingService>;
  subscriptions: ServiceClient<typeof SubscriptionService>;
  logs: ServiceClient<typeof LogsService>;
}

/** What route modules receive. */
export interface RouteDeps {
  config: Config;
  logger: Logger;
  redis: Redis;
  options: OptionsCache;
  clients: Clients;
  /** Publishes an audit event (a log entry in the logs service). */
  audit: AuditSink;
  sessions: Sessions;
  /** Guards: any logged-in user (role >= 1), admin (>= 10), root (>= 100). */
  guard: { user: RequestHandler; admin: RequestHandler; root: RequestHandler };
  /** Rate limit for login, register, reset and verification mail. */
  critical: RequestHandler;
  startTime: number;
}
