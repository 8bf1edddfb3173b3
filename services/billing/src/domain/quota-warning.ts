import type { Applied, WalletLedger } from './wallet-ledger.ts';

/**
 * The quota warning (new-api's checkAndSendQuotaNotify, `QuotaRemindThreshold`): when a user's
 * balance falls below the user's quota_warning_threshold (or the option when the user set none),
 * the user is told ONCE, by the user's notify_type; the warning is armed again only when the
 * balance is seen at or above the threshold (a top-up). Whether a warning went out since the last
 * crossing is a flag in Redis shared by billing's replicas, claimed with SET NX: one message per
 * crossing, whichever replica applies the charge. Each replica remembers the flag for a few
 * seconds, so a burst of charges costs one Redis call per user, not one per request.
 */

export interface QuotaWarningPorts {
  /** The user's threshold (0: no warnings); may be cached by the caller. */
  threshold(userId: number): Promise<number>;
  /** Sets the user's warned flag; true when it was not set (this caller sends the warning). */
  claim(userId: number): Promise<boolean>;
  /** Clears the user's warned flag (the balance is above the threshold again). */
  rearm(userId: number): Promise<void>;
  /** Sends the warning. */
  send(userId: number, quota: number): Promise<void>;
  onError(err: unknown, userId: number): void;
  now?: () => number;
}

/** How long a replica trusts what it last knew of a user's flag. */
const FLAG_MEMO_MS = 5_000;

export function quotaWarnings(ports: QuotaWarningPorts) {
  const now = ports.now ?? Date.now;
  const memo = new Map<number, { warned: boolean; at: number }>();
  // One check at a time per user, the newest balance last: a burst of settles of one user in one
  // round gives one check with the final balance instead of racing checks.
  const running = new Map<number, { next?: number }>();

  async function check(userId: number, quota: number): Promise<void> {
    const threshold = await ports.threshold(userId);
    if (threshold <= 0) return;
    const below = quota < threshold;
    const known = memo.get(userId);
    if (known && now() - known.at < FLAG_MEMO_MS && known.warned === below) return;
    if (below) {
      if (await ports.claim(userId)) await ports.send(userId, quota);
    } else await ports.rearm(userId);
    memo.set(userId, { warned: below, at: now() });
    if (memo.size > 50_000) memo.delete(memo.keys().next().value as number);
  }

  async function drain(userId: number, quota: number): Promise<void> {
    let q: number | undefined = quota;
    while (q !== undefined) {
      try {
        await check(userId, q);
      } catch (err) {
        ports.onError(err, userId);
      }
      const slot = running.get(userId);
      q = slot?.next;
      if (slot) slot.next = undefined;
    }
    running.delete(userId);
  }

  return {
    /** A balance the ledger just recorded for the user (fire and forget). */
    observe(userId: number, quota: number): void {
      const slot = running.get(userId);
      if (slot) {
        slot.next = quota;
        return;
      }
      running.set(userId, {});
      void drain(userId, quota);
    },
  };
}

export type QuotaWarnings = ReturnType<typeof quotaWarnings>;

/**
 * The ledger, telling `observe` the balance each change leaves, reservations not counted: a hold
 * and its refund (a request in flight) neither warn nor re-arm, so a balance near the threshold
 * does not warn once per request; charges, credits and admin changes do (token changes leave the
 * wallet as it was).
 */
export function watchedLedger(ledger: WalletLedger, observe: (userId: number, balance: number) => void): WalletLedger {
  const seen = (userId: number, a: Applied) => {
    if (a.op.kind === 'hold' || a.op.kind === 'refund' || a.op.kind.startsWith('token_')) return;
    let held = 0;
    for (const h of Object.values(a.state.holds)) held += h.a;
    observe(userId, a.state.quota + held);
  };
  return {
    ...ledger,
    async submit(userId, op) {
      const a = await ledger.submit(userId, op);
      seen(userId, a);
      return a;
    },
    async apply(userId, opId, decide) {
      const a = await ledger.apply(userId, opId, decide);
      seen(userId, a);
      return a;
    },
  };
}
