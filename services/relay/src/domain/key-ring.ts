/**
 * The keys of a multi-key channel (one per line in the channel's key; the channels service sends
 * only the enabled ones) and how each request picks one: in turn ("polling") or at random. A key
 * that failed as unusable (401, invalid key) is skipped by this relay from then on; the channels
 * service disables it for every replica, and the next snapshot leaves it out.
 */
import { keyFingerprint, splitKeys } from '@aigw/common';

export type MultiKeyMode = 'random' | 'polling';

export interface KeyRing {
  readonly mode: MultiKeyMode;
  readonly size: number;
  /**
   * The key for the next call, skipping `exclude` and keys marked bad; undefined when none is left.
   * `prefer` (a keyFingerprint): that key when it is usable (channel affinity keeps a session's key).
   */
  next(exclude?: ReadonlySet<string>, random?: () => number, prefer?: string): string | undefined;
  markBad(key: string): void;
  /** How many keys are left outside `exclude` and the bad ones (the turn does not move). */
  available(exclude?: ReadonlySet<string>): number;
}

/** A ring for a channel's key text, or undefined for a single-key channel. */
export function keyRingOf(mode: string | undefined, keyText: string): KeyRing | undefined {
  if (mode !== 'random' && mode !== 'polling') return undefined;
  const keys = splitKeys(keyText);
  const bad = new Set<string>();
  let cursor = 0;
  return {
    mode,
    size: keys.length,
    next(exclude, random = Math.random, prefer) {
      const usable = keys.filter((k) => !bad.has(k) && !exclude?.has(k));
      if (usable.length === 0) return undefined;
      if (prefer) {
        const kept = usable.find((k) => keyFingerprint(k) === prefer);
        if (kept) return kept;
      }
      if (mode === 'random') return usable[Math.floor(random() * usable.length)];
      // In turn over the full list, so a skipped key does not shift the others' turns.
      for (let i = 0; i < keys.length; i++) {
        const k = keys[(cursor + i) % keys.length] as string;
        if (bad.has(k) || exclude?.has(k)) continue;
        cursor = (cursor + i + 1) % keys.length;
        return k;
      }
      return undefined;
    },
    markBad(key) {
      bad.add(key);
    },
    available: (exclude) => keys.filter((k) => !bad.has(k) && !exclude?.has(k)).length,
  };
}
