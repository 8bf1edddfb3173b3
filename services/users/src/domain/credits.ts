import { randomUUID } from 'node:crypto';
import { AppError, invalid } from '@aigw/common/errors';
import type { OptionsReader, PendingCredit, UserRecord, UserStore, Wallet } from './ports.ts';
import { formatQuota, MSG } from './user-rules.ts';

/** billing.v1.CreditReason values. */
export const CREDIT_REASON = { newUser: 1, invitee: 2, affTransfer: 3, other: 5 } as const;

/**
 * Quota the users service grants lives in billing's wallets. A grant is first written into the
 * user's document as a pending credit (in the same write that creates the user or takes the
 * affiliate quota), then delivered to billing, idempotent by request id, and forgotten. What
 * cannot be delivered now (billing down) is retried by `deliverAllPending`, so no grant is lost
 * or paid twice.
 */
export function credits(deps: {
  users: UserStore;
  wallet: Wallet;
  options: OptionsReader;
  warn: (obj: object, msg: string) => void;
}) {
  const { users, wallet, options } = deps;

  /** Delivers a user's pending credits; resolves with the wallet quota after the last one. */
  async function deliver(user: Pick<UserRecord, 'id' | 'username' | 'pending_credits'>): Promise<number | undefined> {
    let quota: number | undefined;
    for (const credit of user.pending_credits) {
      quota = await wallet.credit(user, credit);
      await users.dropPendingCredit(user.id, credit);
    }
    return quota;
  }

  return {
    /** The credits a new account earns: QuotaForNewUser, and QuotaForInvitee when invited. */
    forNewUser(invited: boolean): PendingCredit[] {
      const out: PendingCredit[] = [];
      const gift = options.number('QuotaForNewUser');
      if (gift > 0) {
        out.push({
          request_id: randomUUID(),
          amount: gift,
          reason: CREDIT_REASON.newUser,
          content: `新用户注册赠送 ${formatQuota(gift, options)}`,
        });
      }
      const invitee = options.number('QuotaForInvitee');
      if (invited && invitee > 0) {
        out.push({
          request_id: randomUUID(),
          amount: invitee,
          reason: CREDIT_REASON.invitee,
          content: `使用邀请码赠送 ${formatQuota(invitee, options)}`,
        });
      }
      return out;
    },

    /** Tries to deliver now; a failure is logged and left to the retry loop. */
    async deliverQuietly(user: Pick<UserRecord, 'id' | 'username' | 'pending_credits'>): Promise<void> {
      if (user.pending_credits.length === 0) return;
      try {
        await deliver(user);
      } catch (err) {
        deps.warn({ err, userId: user.id }, 'quota credit not delivered yet; will retry');
      }
    },

    /** One pass of the retry loop. */
    async deliverAllPending(): Promise<void> {
      for (const user of await users.withPendingCredits(100)) {
        try {
          await deliver(user);
        } catch (err) {
          deps.warn(
            { userId: user.id, reason: err instanceof Error ? err.message : String(err) },
            'quota credit retry failed',
          );
          return; // billing is likely down: try again on the next pass
        }
      }
    },

    /**
     * POST /api/user/aff_transfer: at least one quota unit, at most the pending affiliate quota.
     * Resolves with what is left of aff_quota and the wallet quota.
     */
    async transferAffQuota(userId: number, amount: number): Promise<{ affQuota: number; quota: number }> {
      const unit = options.number('QuotaPerUnit');
      if (!Number.isFinite(amount) || amount < unit) throw invalid(`${MSG.affTooLow} ${formatQuota(unit, options)}`);
      const quota = Math.floor(amount);
      const credit: PendingCredit = {
        request_id: randomUUID(),
        amount: quota,
        reason: CREDIT_REASON.affTransfer,
        content: `邀请额度划转 ${formatQuota(quota, options)}`,
      };
      const user = await users.takeAffQuota(userId, quota, credit);
      if (!user) throw invalid(MSG.affShort);
      try {
        const walletQuota = await deliver({ id: userId, username: user.username, pending_credits: [credit] });
        return { affQuota: user.aff_quota, quota: walletQuota ?? 0 };
      } catch (err) {
        deps.warn({ err, userId }, 'aff transfer credit not delivered yet; will retry');
        throw new AppError('UNAVAILABLE', MSG.creditPending, { cause: err });
      }
    },
  };
}

export type Credits = ReturnType<typeof credits>;
