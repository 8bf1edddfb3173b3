import { AppError } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import type { LeasedTask } from '../data/leased-tasks.ts';
import type { Peers } from './ports.ts';
import { renewHold } from './task-billing.ts';

/** A wallet of a few calls: records them in order, pays new holds by `payer`, refuses when told. */
function wallet(payer: string, refuse = false) {
  const calls: string[] = [];
  const peers = {
    async preConsume(r: { requestId: string; model: string; group: string }) {
      calls.push(`hold ${r.requestId} ${r.model}@${r.group}`);
      if (refuse) throw new AppError('FAILED_PRECONDITION', '用户额度不足');
      return { subscriptionId: payer };
    },
    async refund(id: string) {
      calls.push(`refund ${id}`);
      return 0;
    },
  } as unknown as Peers;
  return { calls, peers };
}

const task = (subscription: string) =>
  ({
    request_id: 'r1',
    user_id: 1,
    token_id: 2,
    quota: 100,
    model: 'kling-v1',
    group: 'vip',
    submitted_ms: 0,
    subscription_id: subscription,
  }) as LeasedTask;

describe('hold renewal', () => {
  it('when the wallet pays the hold, then the new hold comes first and names the model and group', async () => {
    const w = wallet('');
    expect(await renewHold(w, task(''), 5)).toEqual({
      hold_id: 'r1:h1',
      hold_at: 5,
      holds_renewed: 1,
      subscription_id: '',
    });
    expect(w.calls).toEqual(['hold r1:h1 kling-v1@vip', 'refund r1']);
  });

  it('when a subscription pays the hold, then the old one goes first (its windows make room) and the payer is kept', async () => {
    const w = wallet('sub-9');
    expect((await renewHold(w, task('sub-9'), 5)).subscription_id).toBe('sub-9');
    expect(w.calls).toEqual(['refund r1', 'hold r1:h1 kling-v1@vip']);
  });

  it('when the new hold is refused, then the task goes on unreserved and paid by the wallet at settle', async () => {
    const w = wallet('sub-9', true);
    expect((await renewHold(w, task('sub-9'), 5)).subscription_id).toBe('');
    expect(w.calls).toEqual(['refund r1', 'hold r1:h1 kling-v1@vip']);
  });
});
