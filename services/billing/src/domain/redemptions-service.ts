import { randomUUID } from 'node:crypto';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import type { RedemptionDoc, RedemptionRepository, RedemptionUse } from '../data/redemption-repository.ts';
import { describeQuota, type OptionReader } from './ports.ts';
import type { WalletService } from './wallet-service.ts';

/** Redemption statuses (spec 02 section 4). */
export const REDEMPTION_STATUS = { unused: 1, disabled: 2, used: 3 } as const;

const MAX_COUNT = 100;
const nowSec = () => Math.floor(Date.now() / 1000);

/** A new code: 32 hex characters (a UUID without hyphens). */
export const newRedemptionKey = () => randomUUID().replaceAll('-', '');

export interface RedemptionView {
  id: number;
  userId: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  createdTime: number;
  redeemedTime: number;
  usedUserId: number;
  expiredTime: number;
}

export const toRedemptionView = (d: RedemptionDoc): RedemptionView => ({
  id: d._id,
  userId: d.user_id,
  name: d.name,
  key: d.key,
  status: d.status,
  quota: d.quota,
  createdTime: d.created_time,
  redeemedTime: d.redeemed_time,
  usedUserId: d.used_user_id,
  expiredTime: d.expired_time ?? 0,
});

function checkName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('兑换码名称不能为空');
  if ([...n].length > 20) throw invalid('兑换码名称长度不能超过 20 个字符');
  return n;
}

/** new-api's rule: 0 (never) or a moment not in the past. */
function checkExpiry(expiredTime: number): number {
  if (!Number.isInteger(expiredTime) || expiredTime < 0) throw invalid('过期时间无效');
  if (expiredTime !== 0 && expiredTime < nowSec()) throw invalid('过期时间不能早于当前时间');
  return expiredTime;
}

function checkQuota(quota: number): number {
  if (!Number.isInteger(quota) || quota <= 0) throw invalid('额度必须为正整数');
  return quota;
}

/** A batch size: 1 when absent, at most MAX_COUNT. */
function checkCount(count: number): number {
  if (!Number.isInteger(count) || count < 1) throw invalid('兑换码个数必须大于 0');
  if (count > MAX_COUNT) throw invalid(`一次兑换码批量生成的个数不能大于 ${MAX_COUNT}`);
  return count;
}

/** The admin's side of redemption codes: list, read, create in batches, edit, disable, delete. */
export function redemptionAdmin(repo: RedemptionRepository) {
  async function existing(id: number): Promise<RedemptionDoc> {
    const doc = await repo.get(id);
    if (!doc) throw notFound('兑换码不存在');
    return doc;
  }

  return {
    async list(keyword: string, skip: number, limit: number) {
      const { items, total } = await repo.page(keyword, skip, limit);
      return { items: items.map(toRedemptionView), total };
    },

    async get(id: number) {
      return toRedemptionView(await existing(id));
    },

    async create(
      actorId: number,
      input: { name: string; quota: number; count: number; expiredTime?: number },
    ): Promise<string[]> {
      const name = checkName(input.name);
      const quota = checkQuota(input.quota);
      const expiredTime = checkExpiry(input.expiredTime ?? 0);
      const count = checkCount(input.count || 1);
      const keys: string[] = [];
      for (let i = 0; i < count; i++) {
        const doc = await repo.insert({
          user_id: actorId,
          name,
          key: newRedemptionKey(),
          status: REDEMPTION_STATUS.unused,
          quota,
          created_time: nowSec(),
          redeemed_time: 0,
          used_user_id: 0,
          expired_time: expiredTime,
        });
        keys.push(doc.key);
      }
      return keys;
    },

    async update(
      id: number,
      input: { name?: string | undefined; quota?: number | undefined; expiredTime?: number | undefined },
    ) {
      const doc = await existing(id);
      if (doc.status === REDEMPTION_STATUS.used) throw precondition('兑换码已被使用，不能修改');
      if (doc.status !== REDEMPTION_STATUS.unused) throw precondition('只能编辑未使用的兑换码');
      const set: Partial<RedemptionDoc> = {};
      if (input.name !== undefined) set.name = checkName(input.name);
      if (input.quota !== undefined) set.quota = checkQuota(input.quota);
      if (input.expiredTime !== undefined) set.expired_time = checkExpiry(input.expiredTime);
      return toRedemptionView((await repo.update(id, set)) ?? doc);
    },

    async setStatus(id: number, status: number) {
      if (status !== REDEMPTION_STATUS.unused && status !== REDEMPTION_STATUS.disabled)
        throw invalid('无效的兑换码状态');
      const doc = await existing(id);
      if (doc.status === REDEMPTION_STATUS.used) throw precondition('兑换码已被使用，不能修改状态');
      return toRedemptionView((await repo.update(id, { status })) ?? doc);
    },

    async remove(id: number) {
      if (!(await repo.remove(id))) throw notFound('兑换码不存在');
    },

    /** DELETE /api/redemption/invalid: used, disabled and expired codes; answers how many. */
    removeInvalid: () => repo.removeInvalid(nowSec()),
  };
}

/** The user's side: redeeming a code exactly once, and finishing claims a crash left uncredited. */
export function redemptionClaims(deps: { repo: RedemptionRepository; wallet: WalletService; options: OptionReader }) {
  const { repo, wallet, options } = deps;

  /** Puts a claimed code's quota into the claimant's wallet (idempotent by the code). */
  async function creditClaim(use: RedemptionUse): Promise<void> {
    await wallet.credit({
      requestId: `redeem:${use._id}`,
      userId: use.user_id,
      username: use.username,
      amount: use.quota,
      reason: 4,
      content: `通过兑换码充值 ${describeQuota(use.quota, options)}，兑换码ID ${use.code_id}`,
    });
    await repo.markCredited(use._id);
  }

  return {
    /** Uses a code once and credits its quota; answers the quota added. */
    async redeem(userId: number, username: string, rawKey: string): Promise<number> {
      const key = rawKey.trim();
      if (key === '') throw invalid('请输入兑换码！');
      const doc = await repo.byKey(key);
      if (!doc) throw invalid('无效的兑换码');
      if (doc.status === REDEMPTION_STATUS.used) throw invalid('该兑换码已被使用');
      if (doc.status !== REDEMPTION_STATUS.unused) throw invalid('该兑换码已被禁用');
      if (doc.expired_time && doc.expired_time < nowSec()) throw invalid('该兑换码已过期');
      const use: RedemptionUse = {
        _id: doc.key,
        code_id: doc._id,
        user_id: userId,
        username,
        quota: doc.quota,
        at: nowSec(),
        credited: false,
      };
      if (!(await repo.claim(use))) throw invalid('该兑换码已被使用');
      await repo.update(doc._id, { status: REDEMPTION_STATUS.used, used_user_id: userId, redeemed_time: use.at });
      await creditClaim(use);
      return doc.quota;
    },

    /** Finishes claims whose credit did not happen (a crash between claim and credit). */
    async repair(): Promise<number> {
      const unfinished = await repo.unfinishedClaims(30);
      for (const use of unfinished) {
        await repo.update(use.code_id, {
          status: REDEMPTION_STATUS.used,
          used_user_id: use.user_id,
          redeemed_time: use.at,
        });
        await creditClaim(use);
      }
      return unfinished.length;
    },
  };
}

/** Redemption codes: admin CRUD and redeeming a code exactly once. */
export function redemptionsService(deps: { repo: RedemptionRepository; wallet: WalletService; options: OptionReader }) {
  return { ...redemptionAdmin(deps.repo), ...redemptionClaims(deps) };
}

export type RedemptionsService = ReturnType<typeof redemptionsService>;
