/**
 * What the users use cases need from the outside world. The data/ layer implements these with
 * mongoose, nodemailer and the billing gRPC client; tests may use the real ones.
 */

import type { OptionAccessors } from '@aigw/common/option-catalogue';

/** Roles of spec 01 section 6. */
export const ROLE = { common: 1, admin: 10, root: 100 } as const;
/** User status: 1 enabled, 2 banned. */
export const STATUS = { enabled: 1, banned: 2 } as const;

/** A quota credit the users service owes a user (new-user gift, invite reward, aff transfer). */
export interface PendingCredit {
  request_id: string;
  amount: number;
  /** billing CreditReason number. */
  reason: number;
  content: string;
}

/** A user as the use cases see it (the stored document without mongoose). */
export interface UserRecord {
  id: number;
  username: string;
  display_name: string;
  /** Empty for accounts created through a third-party login (no password yet). */
  password_hash: string;
  group: string;
  role: number;
  status: number;
  email: string;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
  oidc_id: string;
  linux_do_id: string;
  discord_id: string;
  /** Custom OAuth provider id (decimal) -> the provider's id of the account. */
  custom_oauth_ids: Record<string, string>;
  access_token: string;
  aff_code: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  deleted_at: number;
  created_at: number;
  last_login_at: number;
  pending_credits: PendingCredit[];
  /** Admin's note (new-api's remark). */
  remark: string;
  /** new-api's user setting as JSON text (domain/notification-settings.ts); absent: none. */
  setting?: string;
}

/** Fields that identify a user besides the id; lookups skip soft-deleted users. */
export type IdentityField =
  | 'username'
  | 'email'
  | 'github_id'
  | 'wechat_id'
  | 'telegram_id'
  | 'oidc_id'
  | 'linux_do_id'
  | 'discord_id'
  | `custom_oauth_ids.${number}`
  | 'access_token'
  | 'aff_code';

export type NewUser = Pick<UserRecord, 'username' | 'password_hash'> &
  Partial<Omit<UserRecord, 'id' | 'username' | 'password_hash'>>;

export type UserChanges = Partial<
  Pick<
    UserRecord,
    | 'username'
    | 'display_name'
    | 'password_hash'
    | 'group'
    | 'role'
    | 'status'
    | 'email'
    | 'github_id'
    | 'wechat_id'
    | 'telegram_id'
    | 'oidc_id'
    | 'linux_do_id'
    | 'discord_id'
    | 'access_token'
    | 'aff_code'
    | 'deleted_at'
    | 'last_login_at'
    | 'remark'
    | 'setting'
  >
>;

export interface Page {
  page: number;
  pageSize: number;
}

/** The users collection. */
export interface UserStore {
  /** Inserts a user with a new id; ALREADY_EXISTS when the username is taken (deleted users too). */
  create(user: NewUser): Promise<UserRecord>;
  findById(id: number, includeDeleted?: boolean): Promise<UserRecord | undefined>;
  findManyByIds(ids: number[]): Promise<UserRecord[]>;
  /** A live user by username or, failing that, by email. */
  findByLogin(name: string): Promise<UserRecord | undefined>;
  findBy(field: IdentityField, value: string): Promise<UserRecord | undefined>;
  /** Whether any user, deleted or not, holds the username. */
  usernameTaken(username: string): Promise<boolean>;
  /** Newest first, soft-deleted users included. */
  list(page: Page): Promise<{ items: UserRecord[]; total: number }>;
  /** Keyword matches id, username, display name, email; group matches exactly. */
  search(keyword: string, group: string, page: Page): Promise<{ items: UserRecord[]; total: number }>;
  /** Changes a live user; undefined when none. ALREADY_EXISTS when a new username is taken. */
  update(id: number, changes: UserChanges): Promise<UserRecord | undefined>;
  /** Sets (or, with an empty value, removes) a user's binding to a custom OAuth provider. */
  setCustomOAuthId(id: number, providerId: number, providerUserId: string): Promise<UserRecord | undefined>;
  /** Counts an invitee for the inviter: aff_count + 1, aff_quota and aff_history_quota + reward. */
  recordInvite(inviterId: number, reward: number): Promise<void>;
  /** Moves `amount` of aff_quota into a pending credit, atomically; undefined when it is short. */
  takeAffQuota(id: number, amount: number, credit: PendingCredit): Promise<UserRecord | undefined>;
  /** Forgets a delivered credit (the whole credit: the element is matched exactly). */
  dropPendingCredit(id: number, credit: PendingCredit): Promise<void>;
  /**
   * Claims a calendar day's check-in of a live user and queues its reward as a pending credit, in
   * one write; undefined when the day is already claimed (or the user is gone).
   */
  claimCheckin(id: number, date: string, credit: PendingCredit | undefined): Promise<UserRecord | undefined>;
  /** Users owing credits (for the retry loop). */
  withPendingCredits(limit: number): Promise<UserRecord[]>;
}

/** One-time codes (email verification, password reset), stored with an expiry. */
export interface CodeStore {
  /**
   * Stores a code for (purpose, key), replacing the previous one; false when the previous one was
   * issued less than `resendGuardMs` ago.
   */
  issue(purpose: string, key: string, code: string, ttlMs: number, resendGuardMs: number): Promise<boolean>;
  /** Consumes a matching, unexpired code; false when there is none. */
  consume(purpose: string, key: string, code: string): Promise<boolean>;
  /** Forgets a code (e.g. the mail could not be sent). */
  discard(purpose: string, key: string): Promise<void>;
}

/** Sends mail through the SMTP options. */
export interface Mailer {
  send(to: string, subject: string, html: string): Promise<void>;
}

/** Billing's WalletService, as far as the users service needs it. */
export interface Wallet {
  /** Adds quota (idempotent by request id); resolves with the new wallet quota. */
  credit(user: { id: number; username: string }, credit: PendingCredit): Promise<number>;
}

/**
 * The current system options (an in-memory copy kept current by option-changed events), read by
 * catalogue key with the catalogue's defaults.
 */
export type OptionsReader = OptionAccessors;
