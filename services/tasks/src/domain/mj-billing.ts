/**
 * The money end of a finished task: SUCCESS settles the reservation made at submit, FAILURE (or a
 * timeout) gives it back and logs the refund (type 6) once. Only the replica whose conditional
 * update made the task final runs this; a crash before `billed()` leaves `billing` at settle or
 * refund, and the repair pass runs it again: billing is idempotent by request id and the log by
 * event id, so a replay changes nothing.
 */
import type { MjTaskDoc } from '../data/mj-task-repository.ts';
import type { MjDeps } from './mj-submit.ts';

export async function finishBilling(d: MjDeps, t: MjTaskDoc): Promise<void> {
  if (t.billing === 'settle') {
    if (t.quota > 0) {
      await d.peers.settle({ requestId: t.request_id, actual: t.quota, userId: t.user_id, tokenId: t.token_id });
    }
    await d.repo.billed(t.id, 'settle', 'settled');
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
      content: `绘图任务 ${t.mj_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
      other: { mj_id: t.mj_id, action: t.action, task_id: t.id },
      ip: '',
    });
  }
  await d.repo.billed(t.id, 'refund', 'refunded');
}
