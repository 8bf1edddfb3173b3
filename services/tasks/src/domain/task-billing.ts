/**
 * The money end of a finished task: SUCCESS settles the reservation made at submit, FAILURE (or a
 * timeout) gives it back and logs the refund (type 6) once. Only the replica whose conditional
 * update made the task final runs this; a crash before `billed()` leaves `billing` at settle or
 * refund, and the repair pass runs it again: billing is idempotent by request id and the log by
 * event id, so a replay changes nothing.
 */
import type { LeasedTask } from '../data/leased-tasks.ts';
import type { Peers, UsagePort } from './ports.ts';
import type { TaskPlatform } from './task-platform.ts';

export async function finishBilling<T extends LeasedTask>(
  d: { peers: Peers; usage: UsagePort },
  p: TaskPlatform<T>,
  t: T,
): Promise<void> {
  if (t.billing === 'settle') {
    if (t.quota > 0) {
      await d.peers.settle({ requestId: t.request_id, actual: t.quota, userId: t.user_id, tokenId: t.token_id });
    }
    await p.ops.billed(t.id, 'settle', 'settled');
    return;
  }
  if (t.billing !== 'refund') return;
  if (t.quota > 0) {
    await d.peers.refund(t.request_id);
    await d.usage.publish({
      eventId: `refund:${t.request_id}`,
      requestId: t.request_id,
      type: 6,
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
      other: p.logOther(t),
      ip: '',
    });
  }
  await p.ops.billed(t.id, 'refund', 'refunded');
}
