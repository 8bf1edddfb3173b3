import { describe, expect, it } from 'vitest';
import { encodeSliceSignal, parseSliceSignal, sliceSignalChannel } from './slice-signals.ts';

describe('wallet slice signals', () => {
  it('when a signal is encoded, then it parses back; anything else parses to nothing; the channel carries the key prefix', () => {
    for (const s of [
      { kind: 'revoke', userId: 12 },
      { kind: 'released', userId: 7 },
    ] as const)
      expect(parseSliceSignal(encodeSliceSignal(s))).toEqual(s);
    for (const m of ['revoke', 'revoke:', 'revoke:0', 'revoke:1.5', 'drop:3', ':4', 'released:-2'])
      expect(parseSliceSignal(m)).toBeUndefined();
    expect(sliceSignalChannel('t1:')).toBe('t1:wallet-slices');
  });
});
