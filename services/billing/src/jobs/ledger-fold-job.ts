import type { Logger } from '@aigw/common';
import { type FoldStore, foldPass } from '../domain/ledger-fold.ts';

/**
 * Runs a fold pass `firstMs` after start, then every `intervalMs` (one at a time; stop() ends the
 * pass in flight between two users), with a log line per pass (what it folded and freed, how long it took).
 */
export function startLedgerFold(opts: {
  store: FoldStore;
  horizonMs: number;
  intervalMs: number;
  firstMs: number;
  logger: Logger;
  clock?: () => number;
}): { stop(): void } {
  const clock = opts.clock ?? Date.now;
  const stopped = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const run = async () => {
    const t0 = performance.now();
    try {
      const stats = await foldPass(opts.store, { horizonMs: opts.horizonMs, now: clock(), signal: stopped.signal });
      const ms = Math.round(performance.now() - t0);
      opts.logger.info({ ...stats, ms, horizonHours: opts.horizonMs / 3_600_000 }, 'wallet ledger fold pass');
    } catch (err) {
      opts.logger.warn({ err }, 'wallet ledger fold pass failed; the next pass finishes it');
    }
    if (!stopped.signal.aborted) schedule(opts.intervalMs);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => void run(), ms);
    timer.unref();
  };
  schedule(opts.firstMs);
  return {
    stop() {
      stopped.abort();
      clearTimeout(timer);
    },
  };
}
