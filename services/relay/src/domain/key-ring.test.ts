import { keyFingerprint } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { keyRingOf } from './key-ring.ts';

describe('multi-key rings', () => {
  it('a single-key channel has no ring', () => {
    expect(keyRingOf('', 'sk-1')).toBeUndefined();
  });

  it('polling takes the keys in turn and skips a bad one without shifting the others', () => {
    const ring = keyRingOf('polling', 'k1\n k2 \n\nk3\n');
    expect(ring?.size).toBe(3);
    expect([1, 2, 3, 4].map(() => ring?.next())).toEqual(['k1', 'k2', 'k3', 'k1']);
    ring?.markBad('k3');
    expect([1, 2, 3, 4].map(() => ring?.next())).toEqual(['k2', 'k1', 'k2', 'k1']);
    expect(ring?.available(new Set(['k1']))).toBe(1);
    expect(ring?.next()).toBe('k2');
    expect(ring?.next(new Set(['k1', 'k2']))).toBeUndefined();
  });

  it('random picks among the usable keys', () => {
    const ring = keyRingOf('random', 'a\nb\nc');
    expect(ring?.next(undefined, () => 0.99)).toBe('c');
    ring?.markBad('c');
    expect(ring?.next(undefined, () => 0.99)).toBe('b');
    expect(ring?.next(new Set(['b']), () => 0)).toBe('a');
  });

  it('a preferred key (a session kept by channel affinity) is taken while usable, the turn going on without it', () => {
    const ring = keyRingOf('polling', 'k1\nk2\nk3');
    const k2 = keyFingerprint('k2');
    expect([1, 2, 3].map(() => ring?.next(undefined, undefined, k2))).toEqual(['k2', 'k2', 'k2']);
    expect(ring?.next()).toBe('k1');
    // Marked bad, the preferred key is passed over: the turn goes on (k1 was last: k3 next).
    ring?.markBad('k2');
    expect(ring?.next(undefined, undefined, k2)).toBe('k3');
  });
});
