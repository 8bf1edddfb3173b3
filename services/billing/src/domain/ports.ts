import type { OptionsCache } from '@aigw/common';
import type { LogType } from '@aigw/proto/common/v1/common';

/** Read access to the system options (kept current by option-changed events). */
export type OptionReader = Pick<OptionsCache, 'get' | 'text' | 'bool' | 'number' | 'json' | 'version'>;

/** A log-worthy event for the logs service (type 1 top-up, 3 admin, 4 system). */
export interface AuditRecord {
  /** Deterministic per operation, so a replay is deduplicated downstream. */
  eventId: string;
  userId: number;
  username: string;
  type: LogType.TOPUP | LogType.MANAGE | LogType.SYSTEM;
  content: string;
  quotaDelta: number;
  actorUserId: number;
}

/** What the billing domain tells the rest of the platform. */
export interface BillingEvents {
  audit(record: AuditRecord): Promise<void>;
  /**
   * A token was created, changed or deleted (caches drop it by id). The event carries no key:
   * Kafka keeps events, and keys are not stored in plain anywhere (docs/security.md).
   */
  tokenChanged(change: { id: number; userId: number; action: 'created' | 'updated' | 'deleted' }): Promise<void>;
  /**
   * A user's wallet changed outside the request path (admin adjust or set, redemption, top-up):
   * every relay drops its cached balance of the user, so its next request pre-consumes again.
   */
  walletChanged(userId: number): Promise<void>;
}

/**
 * Tells the relays about a user's wallet slices (common/slice-signals.ts): a hold refused while
 * slices hold the balance asks them back; an applied release after that lets a refused relay retry.
 */
export interface SliceRevokes {
  revoke(userId: number): void;
  /** One of the user's slices was released (its refund applied). */
  released(userId: number): void;
}

/**
 * A paid event (webhook or notification) whose amount or currency is not what its order asked:
 * nothing was credited and the order stays pending (an admin may still complete it).
 */
export interface PaymentMismatch {
  order: 'topup' | 'subscription';
  provider: string;
  tradeNo: string;
  userId: number;
  username: string;
  /** Minor units (cents) and currency; an empty currency where the provider names none (Epay). */
  expected: { cents: number; currency: string };
  paid: { cents: number; currency: string };
}

/** Where payment mismatches are told: a warn log line and an audit event (payment-mismatch.ts). */
export interface PaymentAlarms {
  mismatch(m: PaymentMismatch): Promise<void>;
}

/** The log types of audit events. */

/** Formats quota for log text the way the console shows it: dollars with 6 decimals. */
export function describeQuota(quota: number, options: OptionReader): string {
  const perUnit = options.number('QuotaPerUnit');
  if (!options.bool('DisplayInCurrencyEnabled')) return `${quota} 点额度`;
  return `＄${(quota / perUnit).toFixed(6)} 额度`;
}
