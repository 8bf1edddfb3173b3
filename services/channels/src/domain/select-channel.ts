/** What channel choice needs of an ability row. */
export interface Candidate {
  channelId: number;
  priority: number;
  weight: number;
}

/**
 * Picks the channel for one attempt (reference-behaviour.md, relay step 3): candidates form
 * tiers by priority, highest first; attempt `retry` uses tier `retry` (the lowest one when there
 * are fewer); inside a tier the choice is weighted random (all weights 0 count as equal).
 * Excluded channels (already tried) are left out before tiers are formed. Undefined: none left.
 */
export function selectChannel(
  candidates: Candidate[],
  opts: { retry?: number; exclude?: Iterable<number>; random?: () => number } = {},
): Candidate | undefined {
  const excluded = new Set(opts.exclude ?? []);
  const pool = candidates.filter((c) => !excluded.has(c.channelId));
  if (pool.length === 0) return undefined;
  const tiers = [...new Set(pool.map((c) => c.priority))].sort((a, b) => b - a);
  const tier = tiers[Math.min(Math.max(0, opts.retry ?? 0), tiers.length - 1)];
  const inTier = pool.filter((c) => c.priority === tier);
  const random = opts.random ?? Math.random;
  const total = inTier.reduce((sum, c) => sum + Math.max(0, c.weight), 0);
  if (total === 0) return inTier[Math.floor(random() * inTier.length)];
  let point = random() * total;
  for (const c of inTier) {
    point -= Math.max(0, c.weight);
    if (point < 0) return c;
  }
  return inTier[inTier.length - 1];
}
