import { AppError } from '@aigw/common/errors';
import { describe, expect, it } from 'vitest';
import type { WalletPort } from './relay-request.ts';
import { releaseWaiters, retryWhenRevoked } from './slice-revokes.ts';

/** Billing's answers in order: an error to throw or a balance to grant with. */
function wallet(answers: (AppError | number)[]) {
  const calls: { walletSlice?: boolean }[] = [];
  const port: WalletPort = {
    async preConsume(req) {
      calls.push(req);
      const a = answers.shift();
      if (a instanceof AppError) throw a;
      return { userQuota: a ?? 0, tokenRemainQuota: 0 };
    },
    refund: async () => undefined,
  };
  return { port, calls };
}

const req = { requestId: 'p1-r1', userId: 7, tokenId: 0, amount: 875 };
const revocable = () => new AppError('FAILED_PRECONDITION', '用户额度不足', { retryAfterMs: 1_000 });

describe('a pre-consume refused while slices hold the balance', () => {
  it('when billing marks the refusal retryable, then the request waits for the release of a slice and asks once more', async () => {
    const waiters = releaseWaiters();
    const w = wallet([revocable(), 4_000]);
    const answer = retryWhenRevoked(w.port, waiters.wait).preConsume(req);
    await new Promise((r) => setImmediate(r));
    expect(waiters.size()).toBe(1);
    waiters.released(7);
    expect((await answer).userQuota).toBe(4_000);
    expect(w.calls.length).toBe(2);
    expect(waiters.size()).toBe(0);
  });

  it('when the retry is refused too, or the refusal is not retryable, or it is a slice take, then the refusal stands (one retry at most)', async () => {
    const wait = async () => undefined;
    const twice = wallet([revocable(), revocable()]);
    await expect(retryWhenRevoked(twice.port, wait).preConsume(req)).rejects.toThrow('用户额度不足');
    expect(twice.calls.length).toBe(2);
    const plain = wallet([new AppError('FAILED_PRECONDITION', '用户额度不足')]);
    await expect(retryWhenRevoked(plain.port, wait).preConsume(req)).rejects.toThrow('用户额度不足');
    expect(plain.calls.length).toBe(1);
    const take = wallet([revocable()]);
    await expect(retryWhenRevoked(take.port, wait).preConsume({ ...req, walletSlice: true })).rejects.toThrow();
    expect(take.calls.length).toBe(1);
  });

  it('when no release comes, then the wait ends at the bound', async () => {
    const waiters = releaseWaiters();
    const t0 = performance.now();
    await waiters.wait(7, 30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(waiters.size()).toBe(0);
  });
});
