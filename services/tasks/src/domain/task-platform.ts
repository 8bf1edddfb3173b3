/** What the poller and the billing end need to know about one kind of task (Midjourney, Suno, ...). */
import type { BillingState, LeasedTask, LeaseOps } from '../data/leased-tasks.ts';
import type { ChannelRef } from './ports.ts';

export interface TaskPlatform<T extends LeasedTask> {
  name: string;
  ops: LeaseOps<T> & { byId?(id: number): Promise<T | null> };
  /** The upstream's id of a task. */
  upstreamId(t: T): string;
  /**
   * One upstream call for several tasks of a channel: their current fields by upstream id;
   * undefined when the upstream failed (the channel backs off).
   */
  fetch(channel: ChannelRef, tasks: T[]): Promise<Map<string, Partial<T>> | undefined>;
  /** The fields of a task that failed by timeout at `now` (ms). */
  timedOut(now: number): Partial<T>;
  /** The fields that say when a task finished at `now` (ms), unless the upstream said it. */
  finished(now: number): Partial<T>;
  /** The text of a refund log, and extra keys of its `other`. */
  refundText(t: T): string;
  logOther(t: T): Record<string, unknown>;
  /** Called after a change was applied (notifyHook). */
  changed?(t: T): void;
}

/** SUCCESS settles the charge, FAILURE gives it back. */
export function finishOf(status: string | undefined): BillingState | undefined {
  if (status === 'SUCCESS') return 'settle';
  if (status === 'FAILURE') return 'refund';
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; false as soon as one says false. */
export async function everyLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<boolean>): Promise<boolean> {
  let next = 0;
  let ok = true;
  const worker = async () => {
    while (ok && next < items.length) {
      const item = items[next++] as T;
      if (!(await fn(item))) ok = false;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return ok;
}

/** Upstream calls in flight per channel and round, for platforms that fetch one task per call. */
export const FETCH_CONCURRENCY = 16;
