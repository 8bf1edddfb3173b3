/**
 * Runs tasks one at a time per key inside this process. Correctness never depends on it (the
 * ledger's unique inserts do that across replicas); it only spares concurrent requests of one user
 * from retrying against each other.
 */
export function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return async function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = tails.get(key) ?? Promise.resolve();
    const current = prev.then(task, task);
    const tail = current.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
