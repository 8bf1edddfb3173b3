/**
 * Partitions' batches handled together. kafkajs hands each partition's batch of a fetch to the
 * handler on its own (up to `partitionsConsumedConcurrently` at once), so a consumer of three
 * partitions writes the same users' documents three times per fetch. Calls that arrive within
 * one turn of the event loop are merged into one call of the handler, for consumers whose handler
 * takes events of several partitions at once (each item carries its partition and offset).
 *
 * A merged call that fails is not the callers' verdict: each then runs its own events alone, so
 * a poison event fails only its own partition's call, and the consumer's retries and halving
 * (chunk.ts) work on that partition's events as before.
 */
export function mergedCalls<T>(handle: (items: T[]) => Promise<void>): (items: T[]) => Promise<void> {
  let open: { parts: T[][]; done: Promise<void> } | undefined;
  return (items) => {
    if (open) {
      open.parts.push(items);
      return ownResult(open.done, items, open.parts, handle);
    }
    const group = { parts: [items], done: undefined as unknown as Promise<void> };
    group.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      if (open === group) open = undefined;
      return handle(group.parts.length === 1 ? items : group.parts.flat());
    });
    open = group;
    return ownResult(group.done, items, group.parts, handle);
  };
}

/** The merged call's result for one caller: its success, or, when it failed, its own events run alone. */
async function ownResult<T>(
  done: Promise<void>,
  items: T[],
  parts: T[][],
  handle: (items: T[]) => Promise<void>,
): Promise<void> {
  try {
    await done;
  } catch (err) {
    if (parts.length === 1) throw err;
    await handle(items);
  }
}
