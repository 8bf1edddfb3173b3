/**
 * Pacing of a busy consumer: larger batches when the traffic is high, no added wait when it is low.
 *
 * kafkajs fetches again as soon as a fetch's batches are handled, so under steady traffic each
 * batch holds what arrived during the last one's handling: at 500 req/s about 10 usage events per
 * partition. A batch's store writes grow with the users and scopes in it, not with its size, so
 * such small batches cost the store several writes per event. A partition whose events arrive
 * at `minRate` per second or more therefore waits after its batch until `ms` have passed since
 * that batch began: the next fetch brings what arrived meanwhile. Below `minRate` (a few events,
 * tests, a quiet hour) nothing waits, so a lone event is consumed at once.
 */
export interface Pace {
  /** The least time between the starts of two batches of a busy partition (ms). */
  ms: number;
  /** Events per second of one partition from which it counts as busy. */
  minRate: number;
}

/**
 * How long to wait after a partition's batch of `count` events that began at `start` and ended at
 * `end`; `prevStart` is when its previous batch began (undefined for the first).
 */
export function paceDelay(
  pace: Pace,
  prevStart: number | undefined,
  start: number,
  end: number,
  count: number,
): number {
  if (prevStart === undefined || pace.ms <= 0) return 0;
  const rate = (count * 1000) / Math.max(1, start - prevStart);
  if (rate < pace.minRate) return 0;
  return Math.max(0, Math.min(pace.ms, pace.ms - (end - start)));
}
