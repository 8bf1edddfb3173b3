import { ConfigError } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { readConfig } from './config.ts';

const base = { SESSION_SECRET: 's' };

describe('relay drain settings', () => {
  it('when nothing is set, then the drain lasts 5 min and the forced exit comes 20 s after it', () => {
    const c = readConfig(base);
    expect(c.RELAY_DRAIN_MS).toBe(300_000);
    expect(c.RELAY_FORCE_EXIT_MS).toBe(320_000);
    expect(c.RELAY_DRAIN_DELAY_MS).toBe(5_000);
  });

  it('when only the drain is set, then the forced exit follows it (usage flush headroom)', () => {
    const c = readConfig({ ...base, RELAY_DRAIN_MS: '90000' });
    expect(c.RELAY_FORCE_EXIT_MS).toBe(110_000);
  });

  it('when the forced exit is set, then it is kept; at or below the drain it is refused at start-up', () => {
    expect(readConfig({ ...base, RELAY_DRAIN_MS: '60000', RELAY_FORCE_EXIT_MS: '90000' }).RELAY_FORCE_EXIT_MS).toBe(
      90_000,
    );
    expect(() => readConfig({ ...base, RELAY_DRAIN_MS: '60000', RELAY_FORCE_EXIT_MS: '60000' })).toThrow(ConfigError);
    expect(() => readConfig({ ...base, RELAY_DRAIN_MS: '60000', RELAY_FORCE_EXIT_MS: '30000' })).toThrow(
      /RELAY_FORCE_EXIT_MS: must be greater than RELAY_DRAIN_MS/,
    );
  });

  it('when the delay before the listener closes is set, then it is kept; unset it fits in the drain; set beyond the drain it is refused at start-up', () => {
    expect(readConfig({ ...base, RELAY_DRAIN_DELAY_MS: '1500' }).RELAY_DRAIN_DELAY_MS).toBe(1_500);
    // The chart allows drains of a few seconds: the default delay is then the whole drain.
    expect(readConfig({ ...base, RELAY_DRAIN_MS: '3000' }).RELAY_DRAIN_DELAY_MS).toBe(3_000);
    expect(readConfig({ ...base, RELAY_DRAIN_MS: '0', RELAY_DRAIN_DELAY_MS: '0' }).RELAY_DRAIN_DELAY_MS).toBe(0);
    expect(() => readConfig({ ...base, RELAY_DRAIN_MS: '1000', RELAY_DRAIN_DELAY_MS: '2000' })).toThrow(
      /RELAY_DRAIN_DELAY_MS: must be at most RELAY_DRAIN_MS/,
    );
  });
});
