import { randomUUID } from 'node:crypto';
import type { Logger, ServiceClient } from '@aigw/common';
import { AppError } from '@aigw/common/errors';
import { AdjustMode, type WalletService } from '@aigw/proto/billing/v1/billing';
import { EMPTY_WALLET, type WalletView } from '../../domain/user-view.ts';

/**
 * The wallet fields shown with users (quota, used_quota, request_count) and the admin's quota
 * edit, from billing's WalletService. Reads degrade to zeros when billing is unreachable, so user
 * pages keep working; writes fail.
 */
export interface WalletGateway {
  get(userId: number): Promise<WalletView>;
  getMany(userIds: number[]): Promise<Map<number, WalletView>>;
  /** Sets a user's quota (the edit drawer's value, after the quota modal's additions). */
  setQuota(
    actor: { id: number; role: number; username: string },
    user: { id: number; username: string },
    quota: number,
  ): Promise<WalletView>;
}

const view = (w: { quota: number; usedQuota: number; requestCount: number } | undefined): WalletView =>
  w ? { quota: w.quota, used_quota: w.usedQuota, request_count: w.requestCount } : EMPTY_WALLET;

export function walletGateway(client: ServiceClient<typeof WalletService>, logger: Logger): WalletGateway {
  const degrade = (err: unknown) => {
    if (!(err instanceof AppError) || !['UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED'].includes(err.code)) throw err;
    logger.warn({ err }, 'wallets unavailable; showing zero quota');
  };
  return {
    async get(userId) {
      try {
        return view((await client.getWallet({ userId })).wallet);
      } catch (err) {
        degrade(err);
        return EMPTY_WALLET;
      }
    },
    async getMany(userIds) {
      const out = new Map<number, WalletView>();
      if (userIds.length === 0) return out;
      try {
        for (const w of (await client.getWallets({ userIds })).wallets) out.set(w.userId, view(w));
      } catch (err) {
        degrade(err);
      }
      return out;
    },
    async setQuota(actor, user, quota) {
      const res = await client.adjustQuota({
        actor: { userId: actor.id, role: actor.role, username: actor.username },
        requestId: randomUUID(),
        userId: user.id,
        username: user.username,
        mode: AdjustMode.SET,
        amount: quota,
        remark: `管理员将用户额度设置为 ${quota}`,
      });
      return view(res.wallet);
    },
  };
}
