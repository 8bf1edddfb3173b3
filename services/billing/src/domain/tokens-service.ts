import { randomUUID } from 'node:crypto';
import { AUTO_GROUP, anyUsableGroups, type SpecialUsableGroups } from '@aigw/common';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import type { NewToken, TokenDoc, TokenRepository } from '../data/token-repository.ts';
import { dropToken, type LedgerState, setTokenRemain } from './ledger-state.ts';
import type { BillingEvents, OptionReader } from './ports.ts';
import { checkBudget, type PeriodStarts, periodStarts, spentIn, type TokenBudgets } from './token-budgets.ts';
import {
  batchNames,
  checkExpiry,
  checkGroup,
  checkRemainQuota,
  checkTokenLimit,
  checkTokenName,
  effectiveStatus,
  newTokenKey,
  normaliseAllowIps,
  normaliseModelList,
  TOKEN_STATUS,
} from './token-rules.ts';
import type { WalletLedger } from './wallet-ledger.ts';

/** A token as the API shows it (billing.v1.Token). */
export interface TokenView {
  id: number;
  userId: number;
  name: string;
  key: string;
  status: number;
  remainQuota: number;
  usedQuota: number;
  unlimitedQuota: boolean;
  createdTime: number;
  accessedTime: number;
  expiredTime: number;
  allowIps: string;
  modelLimitsEnabled: boolean;
  modelLimits: string;
  group: string;
  rpmLimit: number;
  tpmLimit: number;
  concurrencyLimit: number;
  /** Period budgets (0 none) and what the token spent in the current periods. */
  budgetDaily: number;
  budgetWeekly: number;
  budgetMonthly: number;
  budgetDailyUsed: number;
  budgetWeeklyUsed: number;
  budgetMonthlyUsed: number;
  crossGroupRetry: boolean;
}

export interface TokenInput {
  name?: string | undefined;
  remainQuota?: number | undefined;
  expiredTime?: number | undefined;
  unlimitedQuota?: boolean | undefined;
  modelLimitsEnabled?: boolean | undefined;
  modelLimits?: string | undefined;
  allowIps?: string | undefined;
  group?: string | undefined;
  rpmLimit?: number | undefined;
  tpmLimit?: number | undefined;
  concurrencyLimit?: number | undefined;
  budgetDaily?: number | undefined;
  budgetWeekly?: number | undefined;
  budgetMonthly?: number | undefined;
  crossGroupRetry?: boolean | undefined;
}

type BudgetFields = Pick<NewToken, 'budget_daily' | 'budget_weekly' | 'budget_monthly'>;

/** The budget fields of an input, checked, as stored (only those given). */
function budgetsOf(input: TokenInput): BudgetFields {
  const out: BudgetFields = {};
  if (input.budgetDaily !== undefined) out.budget_daily = checkBudget(input.budgetDaily, 'd');
  if (input.budgetWeekly !== undefined) out.budget_weekly = checkBudget(input.budgetWeekly, 'w');
  if (input.budgetMonthly !== undefined) out.budget_monthly = checkBudget(input.budgetMonthly, 'm');
  return out;
}

/** A token's budgets (0: none). */
export const budgetsOfDoc = (doc: TokenDoc): TokenBudgets => ({
  d: doc.budget_daily ?? 0,
  w: doc.budget_weekly ?? 0,
  m: doc.budget_monthly ?? 0,
});

const LIMIT_LABELS = { rpmLimit: 'RPM 限制', tpmLimit: 'TPM 限制', concurrencyLimit: '并发请求限制' } as const;

/** The rate limit fields of an input, checked, as stored (only those given). */
function limitsOf(input: TokenInput): Pick<NewToken, 'rpm_limit' | 'tpm_limit' | 'concurrency_limit'> {
  const out: Pick<NewToken, 'rpm_limit' | 'tpm_limit' | 'concurrency_limit'> = {};
  if (input.rpmLimit !== undefined) out.rpm_limit = checkTokenLimit(input.rpmLimit, LIMIT_LABELS.rpmLimit);
  if (input.tpmLimit !== undefined) out.tpm_limit = checkTokenLimit(input.tpmLimit, LIMIT_LABELS.tpmLimit);
  if (input.concurrencyLimit !== undefined)
    out.concurrency_limit = checkTokenLimit(input.concurrencyLimit, LIMIT_LABELS.concurrencyLimit);
  return out;
}

const MAX_BATCH = 100;
const nowSec = () => Math.floor(Date.now() / 1000);

export function toTokenView(
  doc: TokenDoc,
  state: LedgerState,
  now = nowSec(),
  starts: PeriodStarts = periodStarts(now * 1000, '').starts,
): TokenView {
  const bal = state.tokens[String(doc._id)] ?? { r: 0, u: 0 };
  const used = spentIn(bal.p, starts);
  const budgets = budgetsOfDoc(doc);
  return {
    id: doc._id,
    userId: doc.user_id,
    name: doc.name,
    key: doc.key,
    status: effectiveStatus(doc, bal.r, now),
    remainQuota: bal.r,
    usedQuota: bal.u,
    unlimitedQuota: doc.unlimited_quota,
    createdTime: doc.created_time,
    accessedTime: doc.accessed_time,
    expiredTime: doc.expired_time,
    allowIps: doc.allow_ips,
    modelLimitsEnabled: doc.model_limits_enabled,
    modelLimits: doc.model_limits,
    group: doc.group,
    rpmLimit: doc.rpm_limit ?? 0,
    tpmLimit: doc.tpm_limit ?? 0,
    concurrencyLimit: doc.concurrency_limit ?? 0,
    budgetDaily: budgets.d,
    budgetWeekly: budgets.w,
    budgetMonthly: budgets.m,
    budgetDailyUsed: used.d,
    budgetWeeklyUsed: used.w,
    budgetMonthlyUsed: used.m,
    crossGroupRetry: doc.cross_group_retry === true && doc.group === AUTO_GROUP,
  };
}

/** What the token factories need. */
type TokenDeps = { repo: TokenRepository; ledger: WalletLedger; events: BillingEvents; options: OptionReader };

/** Any group some user may pick (the gateway checks the owner's own: usableGroupsFor). */
const usableGroupsOf = (options: OptionReader) =>
  anyUsableGroups(
    options.json<Record<string, string>>('UserUsableGroups'),
    options.json<SpecialUsableGroups>('group_ratio_setting.group_special_usable_group'),
    options.json<Record<string, number>>('GroupRatio'),
  );

const startsAt = (options: OptionReader, now: number) => periodStarts(now * 1000, options.text('TimeZone')).starts;

/** A new token's stored fields but its name and key, checked (the create form). */
export function newTokenFields(
  userId: number,
  input: TokenInput,
  usableGroups: () => Record<string, string>,
): Omit<NewToken, 'name' | 'key'> {
  const base: Omit<NewToken, 'name' | 'key'> = {
    user_id: userId,
    status: TOKEN_STATUS.enabled,
    unlimited_quota: input.unlimitedQuota ?? false,
    created_time: nowSec(),
    accessed_time: nowSec(),
    expired_time: checkExpiry(input.expiredTime ?? -1, nowSec()),
    allow_ips: normaliseAllowIps(input.allowIps ?? ''),
    model_limits_enabled: input.modelLimitsEnabled ?? false,
    model_limits: normaliseModelList(input.modelLimits ?? ''),
    group: checkGroup(input.group ?? '', usableGroups()),
    rpm_limit: 0,
    tpm_limit: 0,
    concurrency_limit: 0,
    ...limitsOf(input),
    ...budgetsOf(input),
  };
  // new-api: cross-group retry is a setting of auto tokens only.
  base.cross_group_retry = base.group === AUTO_GROUP && input.crossGroupRetry === true;
  return base;
}

/** The stored fields an edit of `doc` changes, checked (only those given). */
export function tokenChanges(
  doc: TokenDoc,
  input: TokenInput,
  usableGroups: () => Record<string, string>,
): Partial<NewToken> {
  const set: Partial<NewToken> = {};
  if (input.name !== undefined) set.name = checkTokenName(input.name, true);
  if (input.expiredTime !== undefined && input.expiredTime !== doc.expired_time)
    set.expired_time = checkExpiry(input.expiredTime, nowSec());
  if (input.unlimitedQuota !== undefined) set.unlimited_quota = input.unlimitedQuota;
  if (input.modelLimitsEnabled !== undefined) set.model_limits_enabled = input.modelLimitsEnabled;
  if (input.modelLimits !== undefined) set.model_limits = normaliseModelList(input.modelLimits);
  if (input.allowIps !== undefined) set.allow_ips = normaliseAllowIps(input.allowIps);
  if (input.group !== undefined) set.group = checkGroup(input.group, usableGroups());
  Object.assign(set, limitsOf(input), budgetsOf(input));
  // new-api: cross-group retry is a setting of auto tokens only (off when the group leaves auto).
  const group = set.group ?? doc.group;
  if (input.crossGroupRetry !== undefined || set.group !== undefined)
    set.cross_group_retry = group === AUTO_GROUP && (input.crossGroupRetry ?? doc.cross_group_retry === true);
  return set;
}

/** Tokens as the API shows them, with the owner's ledger state read once. */
async function tokenViews({ ledger, options }: TokenDeps, userId: number, docs: TokenDoc[]): Promise<TokenView[]> {
  if (docs.length === 0) return [];
  const state = await ledger.state(userId);
  const now = nowSec();
  const starts = startsAt(options, now);
  return docs.map((d) => toTokenView(d, state, now, starts));
}

/** The caller's token; NOT_FOUND unless the caller owns it. */
async function ownedToken(repo: TokenRepository, userId: number, id: number): Promise<TokenDoc> {
  const doc = await repo.get(userId, id);
  if (!doc) throw notFound('令牌不存在');
  return doc;
}

/** Reading tokens: the owner's pages and searches, one token, the relay's lookup by key, pre-consume's limit. */
export function tokenReads(deps: TokenDeps) {
  const { repo, ledger, options } = deps;
  const views = (userId: number, docs: TokenDoc[]) => tokenViews(deps, userId, docs);

  return {
    async list(userId: number, skip: number, limit: number) {
      const { items, total } = await repo.page({ userId }, skip, limit);
      return { items: await views(userId, items), total };
    },

    async search(userId: number, keyword: string, token: string, skip: number, limit: number) {
      const key = token.trim().replace(/^sk-/, '');
      const { items, total } = await repo.page({ userId, keyword: keyword.trim(), key }, skip, limit);
      return { items: await views(userId, items), total };
    },

    async get(userId: number, id: number): Promise<TokenView> {
      const [view] = await views(userId, [await ownedToken(repo, userId, id)]);
      return view as TokenView;
    },

    /** The relay's key check: any status (the relay decides), NOT_FOUND for unknown keys. */
    async lookup(key: string): Promise<TokenView> {
      const doc = await repo.byKey(key.replace(/^sk-/, ''));
      if (!doc) throw notFound('无效的令牌');
      const state = await ledger.state(doc.user_id, { fresh: false });
      const now = nowSec();
      return toTokenView(doc, state, now, startsAt(options, now));
    },

    async listForUser(userId: number, onlyEnabled: boolean, limit: number): Promise<TokenView[]> {
      const { items } = await repo.page({ userId, onlyEnabled }, 0, limit > 0 ? limit : 1000);
      const all = await views(userId, items);
      return onlyEnabled ? all.filter((t) => t.status === TOKEN_STATUS.enabled) : all;
    },

    /** For pre-consume: the owner and whether the quota is limited. */
    async limitOf(tokenId: number) {
      const doc = await repo.byId(tokenId);
      return doc ? { userId: doc.user_id, unlimited: doc.unlimited_quota, budgets: budgetsOfDoc(doc) } : null;
    },
  };
}

/** Changing tokens: create (in batches), edit, enable or disable, delete; each tells the relays. */
export function tokenWrites(deps: TokenDeps, get: (userId: number, id: number) => Promise<TokenView>) {
  const { repo, ledger, events, options } = deps;
  const usableGroups = () => usableGroupsOf(options);

  const setRemain = (doc: TokenDoc, remain: number) =>
    ledger.apply(doc.user_id, `token-set:${doc._id}:${randomUUID()}`, (s) => ({
      kind: 'token_set',
      amount: remain,
      state: setTokenRemain(s, doc._id, remain),
      result: {},
    }));

  return {
    async create(userId: number, input: TokenInput & { count?: number }): Promise<TokenView[]> {
      const count = input.count || 1;
      if (!Number.isInteger(count) || count < 1 || count > MAX_BATCH) throw invalid(`一次最多创建 ${MAX_BATCH} 个令牌`);
      const name = checkTokenName(input.name ?? '', true);
      const remain = checkRemainQuota(input.remainQuota ?? 0);
      const base = newTokenFields(userId, input, usableGroups);
      const created: TokenDoc[] = [];
      for (const n of batchNames(name, count)) {
        const doc = await repo.insert({ ...base, name: n, key: newTokenKey() }, newTokenKey);
        await ledger.apply(userId, `token-init:${doc._id}`, (s) => ({
          kind: 'token_init',
          amount: remain,
          state: setTokenRemain(s, doc._id, remain),
          result: {},
        }));
        created.push(doc);
        await events.tokenChanged({ id: doc._id, userId, action: 'created' });
      }
      return tokenViews(deps, userId, created);
    },

    async update(userId: number, id: number, input: TokenInput): Promise<TokenView> {
      const doc = await ownedToken(repo, userId, id);
      const set = tokenChanges(doc, input, usableGroups);
      const remain = input.remainQuota === undefined ? undefined : checkRemainQuota(input.remainQuota);
      const updated = await repo.update(userId, id, set);
      if (!updated) throw notFound('令牌不存在');
      if (remain !== undefined) {
        const state = await ledger.state(userId);
        if ((state.tokens[String(id)]?.r ?? 0) !== remain) await setRemain(updated, remain);
      }
      await events.tokenChanged({ id, userId, action: 'updated' });
      return get(userId, id);
    },

    async setStatus(userId: number, id: number, status: number): Promise<TokenView> {
      if (status !== TOKEN_STATUS.enabled && status !== TOKEN_STATUS.disabled) throw invalid('无效的令牌状态');
      const doc = await ownedToken(repo, userId, id);
      if (status === TOKEN_STATUS.enabled) {
        const now = nowSec();
        const view = toTokenView(
          { ...doc, status: TOKEN_STATUS.enabled },
          await ledger.state(userId),
          now,
          startsAt(options, now),
        );
        if (view.status === TOKEN_STATUS.expired)
          throw precondition('令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期');
        if (view.status === TOKEN_STATUS.exhausted)
          throw precondition('令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度');
      }
      await repo.update(userId, id, { status });
      await events.tokenChanged({ id, userId, action: 'updated' });
      return get(userId, id);
    },

    async remove(userId: number, id: number): Promise<void> {
      await ownedToken(repo, userId, id); // NOT_FOUND unless the caller owns it
      await repo.remove(userId, id);
      await ledger.apply(userId, `token-drop:${id}`, (s) => ({
        kind: 'token_drop',
        amount: 0,
        state: dropToken(s, id),
        result: {},
      }));
      await events.tokenChanged({ id, userId, action: 'deleted' });
    },
  };
}

/** Token use cases, scoped to the owner. Balances live in the owner's ledger state. */
export function tokensService(deps: TokenDeps) {
  const reads = tokenReads(deps);
  return { ...reads, ...tokenWrites(deps, reads.get) };
}

export type TokensService = ReturnType<typeof tokensService>;
