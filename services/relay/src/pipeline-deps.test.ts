import { describe, expect, it } from 'vitest';
import type { Ratios } from './domain/pricing.ts';
import { RelayError } from './domain/relay-error.ts';
import { currentRatios, hasTiers, processSlices, relaySettings } from './pipeline-deps.ts';

const base: Ratios = { modelRatio: { m: 1 }, completionRatio: {}, modelPrice: {}, groupRatio: { default: 1 } };

const EMPTY = {};

function setup() {
  const state = { full: false, ratiosLoaded: true, snapshotLoaded: true, base, json: {} as Record<string, unknown> };
  const ratios = currentRatios(
    { full: () => state.full },
    { loaded: () => state.ratiosLoaded, current: () => state.base },
    { loaded: () => state.snapshotLoaded },
    // Like the options cache: one parsed value per change.
    { json: <T>(key: string) => (state.json[key] ?? EMPTY) as T },
  );
  return { state, ratios };
}

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof RelayError ? `${err.status} ${err.code}` : 'other';
  }
  return 'none';
};

describe('currentRatios', () => {
  it('when the usage buffer is full or nothing is loaded yet, then a 503 to retry', () => {
    const { state, ratios } = setup();
    state.full = true;
    expect(codeOf(ratios)).toBe('503 usage_buffer_full');
    state.full = false;
    state.snapshotLoaded = false;
    expect(codeOf(ratios)).toBe('503 snapshot_not_loaded');
    state.snapshotLoaded = true;
    state.ratiosLoaded = false;
    expect(codeOf(ratios)).toBe('503 snapshot_not_loaded');
  });

  it('when no tiers or group-group ratios are set, then the loaded ratios themselves', () => {
    const { ratios } = setup();
    expect(ratios()).toBe(base);
  });

  it('when tiers are set, then one merged copy until an input changes', () => {
    const { state, ratios } = setup();
    const tiers = { m: [{ upTo: 1000, ratio: 2 }] };
    state.json.ModelPriceTiers = tiers;
    const a = ratios();
    expect(a).toMatchObject({ modelRatio: { m: 1 }, priceTiers: tiers });
    expect(ratios()).toBe(a);
    state.json.GroupGroupRatio = { vip: { default: 0.5 } };
    const b = ratios();
    expect(b).not.toBe(a);
    expect(b.groupGroupRatio).toEqual({ vip: { default: 0.5 } });
  });
});

describe('hasTiers', () => {
  it('when the option is empty or not an object, then none', () => {
    expect(hasTiers({})).toBe(false);
    expect(hasTiers(undefined as unknown as Record<string, unknown>)).toBe(false);
    expect(hasTiers({ m: [] })).toBe(true);
  });
});

describe('relaySettings', () => {
  it('when unpriced models are served, then DefaultModelRatio when it is a ratio, else none', () => {
    const opts = { UnpricedModelsEnabled: true, DefaultModelRatio: 2.5, RetryTimes: 3 } as Record<string, unknown>;
    const s = relaySettings(
      { number: (k) => Number(opts[k] ?? 0), bool: (k) => opts[k] === true },
      { RELAY_FIRST_TOKEN_TIMEOUT_MS: 9000 },
      () => 4096,
    );
    expect(s.unpricedModelRatio?.()).toBe(2.5);
    expect(s.retryTimes()).toBe(3);
    expect(s.firstTokenTimeoutMs()).toBe(9000);
    opts.DefaultModelRatio = -1;
    expect(s.unpricedModelRatio?.()).toBeUndefined();
    opts.UnpricedModelsEnabled = false;
    opts.DefaultModelRatio = 2;
    expect(s.unpricedModelRatio?.()).toBeUndefined();
  });
});

describe('the wallet slices of a process', () => {
  it('when a request draws from a slice, then the slice is a wallet-only pre-consume under an id of this process, the request is watched by the fence, and the fence closes the slice (released once the request ends)', async () => {
    const calls: Record<string, unknown>[] = [];
    const released: string[] = [];
    const held: string[] = [];
    let cut: () => void = () => undefined;
    const slices = processSlices(
      { RELAY_WALLET_SLICE_REQUESTS: 8, RELAY_WALLET_SLICE_IDLE_MS: 5_000, RELAY_WALLET_SLICE_MAX_AGE_MS: 300_000 },
      {
        async preConsume(req) {
          calls.push(req);
          return { preConsumed: req.amount, userQuota: 1_000_000, tokenRemainQuota: 0 };
        },
        refund: async () => undefined,
      },
      { sliceRelease: (_userId, id) => released.push(id) },
      {
        held: (rid) => held.push(rid),
        onCut: (l) => {
          cut = l;
        },
      },
      () => 'abcd1234-x-1',
    );
    const ticket = await slices.reserve('req-1', 7, 100);
    expect(calls).toEqual([
      { requestId: 'abcd1234-x-1-slice', userId: 7, tokenId: 0, amount: 800, walletSlice: true, sliceMin: 100 },
    ]);
    // The lease lapse reads the process id before the first dash.
    expect(ticket?.slice.id.split('-')[0]).toBe('abcd1234');
    expect(held).toEqual(['req-1']);
    cut();
    expect(released).toEqual([]);
    if (ticket) slices.finish(ticket, 40);
    expect(released).toEqual(['abcd1234-x-1-slice']);
  });
});
