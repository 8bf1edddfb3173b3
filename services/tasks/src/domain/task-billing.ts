/**
 * The money end of a finished task: SUCCESS settles the reservation made at submit, FAILURE (or a
 * timeout) gives it back and logs the refund (type 6) once. Only the replica whose conditional
 * update made the task final runs this; a crash before `billed()` leaves `billing` at settle or
 * refund, and the repair pass runs it again: billing is idempotent by request id and the log by
 * event id, so a replay changes nothing.
 */
import { AppError } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { LeasedTask } from '../data/leased-tasks.ts';
import { paidBy } from './charge.ts';
import type { Peers, UsagePort } from './ports.ts';
import type { TaskPlatform } from './task-platform.ts';

/** The reservation a task's charge is held under now (see LeasedTask.hold_id). */
export const holdOf = (t: LeasedTask): { id: string; at: number } => ({
  id: t.hold_id || t.request_id,
  at: t.hold_at || t.submitted_ms,
});

/**
 * Renews the reservation of a task that runs longer than billing keeps holds (an hour): a new
 * hold `<request_id>:h<n>` for the same amount, then the old one given back, so that the charge
 * stays reserved (the user cannot spend it twice) and never silently comes back by expiry while
 * the task runs. Ids are deterministic: a replay after a crash reserves nothing twice (billing
 * answers a replayed pre-consume from its record) and gives back nothing twice. When the wallet
 * cannot cover two holds at once, the old one goes first; when even then the new one is refused,
 * the task goes on unreserved (SUCCESS then charges it outright, as a settle without a hold does).
 * Returns the fields to store with the task.
 */
export async function renewHold(
  d: { peers: Peers },
  t: LeasedTask,
  now: number,
): Promise<Pick<LeasedTask, 'hold_id' | 'hold_at' | 'holds_renewed' | 'subscription_id'>> {
  const n = (t.holds_renewed ?? 0) + 1;
  const next = `${t.request_id}:h${n}`;
  const old = holdOf(t).id;
  const req = {
    requestId: next,
    userId: t.user_id,
    tokenId: t.token_id,
    amount: t.quota,
    model: t.model,
    group: t.group,
  };
  const refused = (err: unknown) => err instanceof AppError && err.code === 'FAILED_PRECONDITION';
  const unlessRefused = (e: unknown) => {
    if (!refused(e)) throw e;
  };
  let subscriptionId = '';
  const take = async () => {
    subscriptionId = (await d.peers.preConsume(req)).subscriptionId;
  };
  if (t.quota > 0 && t.subscription_id) {
    // A subscription pays the hold: the old one goes first, so that the subscription's windows
    // have room for the new one (the wallet cannot be spent twice through a subscription's hold).
    await d.peers.refund(old);
    await take().catch(unlessRefused);
  } else if (t.quota > 0) {
    try {
      await take();
      await d.peers.refund(old);
    } catch (err) {
      if (!refused(err)) throw err;
      await d.peers.refund(old);
      await take().catch(unlessRefused);
    }
  }
  return { hold_id: next, hold_at: now, holds_renewed: n, subscription_id: subscriptionId };
}

export async function finishBilling<T extends LeasedTask>(
  d: { peers: Peers; usage: UsagePort },
  p: TaskPlatform<T>,
  t: T,
): Promise<void> {
  if (t.billing === 'settle') {
    if (t.quota > 0) {
      await d.peers.settle({ requestId: holdOf(t).id, actual: t.quota, userId: t.user_id, tokenId: t.token_id });
    }
    await p.ops.billed(t.id, 'settle', 'settled');
    return;
  }
  if (t.billing !== 'refund') return;
  if (t.quota > 0) {
    await d.peers.refund(holdOf(t).id);
    await d.usage.publish({
      eventId: `refund:${t.request_id}`,
      requestId: t.request_id,
      type: LogType.REFUND,
      userId: t.user_id,
      username: t.username,
      tokenId: t.token_id,
      tokenName: t.token_name,
      group: t.group,
      model: t.model,
      channelId: t.channel_id,
      quota: t.quota,
      modelPrice: t.model_price,
      groupRatio: t.group_ratio,
      content: p.refundText(t),
      other: { ...p.logOther(t), ...paidBy(t.subscription_id) },
      ip: '',
    });
  }
  await p.ops.billed(t.id, 'refund', 'refunded');
}
