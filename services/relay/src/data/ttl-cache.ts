/**
 * A small in-memory cache with a time to live, single-flight loads (concurrent misses share one
 * load) and a size bound. Misses that resolve to undefined are cached briefly too, so a flood
 * of bad keys does not become a flood of lookups.
 */
export interface TtlCache<K, V> {
  get(key: K): Promise<V | undefined>;
  peek(key: K): V | undefined;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
}

export function ttlCache<K, V>(opts: {
  ttlMs: number;
  negativeTtlMs?: number;
  max?: number;
  load(key: K): Promise<V | undefined>;
}): TtlCache<K, V> {
  const entries = new Map<K, { value: V | undefined; expires: number }>();
  const inflight = new Map<K, Promise<V | undefined>>();
  const max = opts.max ?? 100_000;
  return {
    async get(key) {
      const hit = entries.get(key);
      if (hit && hit.expires > Date.now()) return hit.value;
      const running = inflight.get(key);
      if (running) return running;
      const p = opts
        .load(key)
        .then((value) => {
          if (entries.size >= max) entries.delete(entries.keys().next().value as K);
          const ttl = value === undefined ? (opts.negativeTtlMs ?? 2_000) : opts.ttlMs;
          entries.set(key, { value, expires: Date.now() + ttl });
          return value;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
      return p;
    },
    peek: (key) => {
      const hit = entries.get(key);
      return hit && hit.expires > Date.now() ? hit.value : undefined;
    },
    delete: (key) => {
      entries.delete(key);
    },
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
