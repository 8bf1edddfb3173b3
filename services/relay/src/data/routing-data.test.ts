import { createLogger, type ServiceClient } from '@aigw/common';
import type { PricingService } from '@aigw/proto/billing/v1/billing';
import { eventually } from '@aigw/testkit';
import { describe, expect, it } from 'vitest';
import { pricingData } from './routing-data.ts';

/** A PricingService answer for GetRatios only: the completion ratio of `m` as billing's options at each version hold it. */
const billingAt = (answers: { version: number; completion: number }[]) => {
  let calls = 0;
  const client = {
    getRatios: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)] as { version: number; completion: number };
      return {
        modelRatio: { m: 1 },
        completionRatio: { m: a.completion },
        modelPrice: {},
        groupRatio: { default: 1 },
        version: a.version,
      };
    },
  } as unknown as ServiceClient<typeof PricingService>;
  return { client, calls: () => calls };
};

describe("the relay's ratios", () => {
  it('when billing answers from options older than the change this relay has seen, then the answer is not kept and the load is tried again until billing has it', async () => {
    // The relay saw version 7 (CompletionRatio set to 2); billing's first answer still holds version 6.
    const billing = billingAt([
      { version: 6, completion: 1 },
      { version: 7, completion: 2 },
    ]);
    const ratios = pricingData(billing.client, createLogger('relay-test', 'silent'), 60_000, () => 7);
    try {
      await ratios.reload();
      expect(ratios.loaded()).toBe(false);
      expect(ratios.current().completionRatio).toEqual({});
      await eventually(
        async () => ratios.current().completionRatio,
        (r) => r.m === 2,
        { timeoutMs: 5_000, what: 'the ratios of version 7' },
      );
      expect(billing.calls()).toBe(2);
      expect(ratios.loaded()).toBe(true);
    } finally {
      ratios.stop();
    }
  });

  it('when billing is at or past the version this relay has seen, then its first answer is kept', async () => {
    const billing = billingAt([{ version: 9, completion: 3 }]);
    const ratios = pricingData(billing.client, createLogger('relay-test', 'silent'), 60_000, () => 8);
    try {
      await ratios.reload();
      expect(ratios.loaded()).toBe(true);
      expect(ratios.current().completionRatio).toEqual({ m: 3 });
      expect(billing.calls()).toBe(1);
    } finally {
      ratios.stop();
    }
  });
});
