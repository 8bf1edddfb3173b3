/**
 * Billing assertions shared by the relay's provider tests. Kept apart from @aigw/testkit's harness,
 * which the benchmarks in bench/ import outside Vitest (importing `vitest` there fails at load).
 */
import { eventually } from '@aigw/testkit';
import type { RelayStack } from '@aigw/testkit/harness';
import { expect } from 'vitest';

/**
 * Waits for `count` consumption logs of a model, checks each against the billing formula with the
 * ratios it records, and the user's used quota against their sum; returns the logs.
 */
export async function expectBilled(s: RelayStack, userId: number, model: string, count: number) {
  const res = await eventually(
    () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 20 } }),
    (r) => r.items.length >= count,
  );
  expect(res.items).toHaveLength(count);
  let sum = 0;
  for (const log of res.items) {
    const o = JSON.parse(log.other) as { model_ratio: number; completion_ratio: number; group_ratio: number };
    const expected = Math.max(
      1,
      Math.round((log.promptTokens + log.completionTokens * o.completion_ratio) * o.model_ratio * o.group_ratio),
    );
    expect(log.quota).toBe(expected);
    sum += log.quota;
  }
  const used = await eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0,
    (v) => v >= sum,
  );
  expect(used).toBe(sum);
  return res.items;
}
