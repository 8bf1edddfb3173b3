/**
 * A small in-memory cache with a time to live, single-flight loads (concurrent misses share one
 * load) and a size bound. Misses that resolve to undefined are cached briefly too, so a flood
 * of bad keys does not become a flood of lookups.
 *
 * Entries are refreshed ahead of expiry: a read in the last fifth of an entry's life still gets
 * the cached value at once and starts a background reload, so a busy key never makes a request
 * wait for a lookup (that wait was the relay's worst latency at a steady rate). A failed
 * background reload leaves the entry to expire as usual.
 */
export interface TtlCache<K, V> {
  get(key: K): Promise<V | undefined>;
  /** The cached value while fresh, without waiting (starts the refresh-ahead when due). */
  peek(key: K): V | undefined;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
}

interface Entry<V> {
  value: V | undefined;
  expires: number;
  refreshAt: number;
}

export function ttlCache<K, V>(opts: {
  ttlMs: number;
  negativeTtlMs?: number;
  max?: number;
  load(key: K): Promise<V | undefined>;
  now?: () => number;
}): TtlCache<K, V> {
  const entries = new Map<K, Entry<V>>();
  const inflight = new Map<K, Promise<V | undefined>>();
  const max = opts.max ?? 100_000;
  const now = opts.now ?? Date.now;

  const load = (key: K): Promise<V | undefined> => {
    const running = inflight.get(key);
    if (running) return running;
    const p = opts
      .load(key)
      .then((value) => {
        if (!entries.has(key) && entries.size >= max) entries.delete(entries.keys().next().value as K);
        const ttl = value === undefined ? (opts.negativeTtlMs ?? 2_000) : opts.ttlMs;
        const t = now();
        entries.set(key, { value, expires: t + ttl, refreshAt: t + ttl * 0.8 });
        return value;
      })
      .finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  };
  const fresh = (key: K): Entry<V> | undefined => {
    const hit = entries.get(key);
    if (!hit) return undefined;
    const t = now();
    if (hit.expires <= t) return undefined;
    if (hit.refreshAt <= t && !inflight.has(key)) load(key).catch(() => undefined);
    return hit;
  };

  return {
    get(key) {
      const hit = fresh(key);
      return hit ? Promise.resolve(hit.value) : load(key);
    },
    peek: (key) => fresh(key)?.value,
    delete: (key) => {
      entries.delete(key);
    },
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
