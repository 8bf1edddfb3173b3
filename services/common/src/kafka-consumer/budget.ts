/** Time limits and heartbeats around a batch handler. */

/** A handler call ran past KAFKA_CONSUMER_BATCH_BUDGET_MS. */
export class OverBudget extends Error {}

/** A heartbeat failed while a chunk ran or waited: the group has moved on. */
export class HeartbeatFailed {
  constructor(readonly cause: unknown) {}
}

/** The handler's promise, or OverBudget once `ms` passed (the call itself is left running). */
export async function withBudget<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        t = setTimeout(() => reject(new OverBudget(`handler over its ${ms} ms budget`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}

/** Runs fn while sending a heartbeat every `everyMs`; a failed heartbeat is thrown after fn ends. */
export async function withHeartbeats<T>(
  fn: () => Promise<T>,
  heartbeat: () => Promise<void>,
  everyMs: number,
): Promise<T> {
  let hbErr: unknown;
  const timer = setInterval(() => {
    heartbeat().catch((err) => {
      hbErr ??= err;
    });
  }, everyMs);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    clearInterval(timer);
    throw hbErr ? new HeartbeatFailed(hbErr) : err;
  }
  clearInterval(timer);
  if (hbErr) throw new HeartbeatFailed(hbErr);
  return result;
}

/** Waits `ms` (a retry's backoff) still sending heartbeats; a failed one throws HeartbeatFailed. */
export async function sleepWithHeartbeats(ms: number, heartbeat: () => Promise<void>, everyMs: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await sleep(Math.min(everyMs, end - Date.now()));
    try {
      await heartbeat();
    } catch (err) {
      throw new HeartbeatFailed(err);
    }
  }
}

/** p's value, or undefined once `ms` passed. */
export async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let t: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<undefined>((r) => {
      t = setTimeout(() => r(undefined), ms);
    });
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
