/**
 * The cubes' background job (log-index-cubing.ts): a pass at start and every interval, each
 * bounded (a few closed hours, or one closed day merged from its hours' cubes), the next one at
 * once while work is left. Its
 * progress is the store's (everyone's hour cubes, `hcubed.<day>` in the meta document), so a
 * restart goes on where it stopped, and two replicas doing the same hour store the same cubes.
 * It only reads the lists and inserts cubes (under 0.1 ms each): the consumer's writes, one at a
 * time on FerretDB, wait for an insert of at most 500 cubes between its own.
 */
import type { Logger } from '@aigw/common';
import type { LogIndexRepository } from './log-index-repository.ts';

/** Closed hours cubed per pass (an hour of everyone's list is read whole). */
const HOURS_PER_PASS = 6;
/** Segments of the current hour cubed per pass (each read from its scope's blocks). */
const SEGMENTS_PER_PASS = 40;

export interface CubingPass {
  days: number;
  hours: number;
  /** Complete segments of the current hour (domain/log-segments.ts). */
  segments: number;
  more: boolean;
}

export function logCubingJob(index: LogIndexRepository, logger: Logger, intervalMs: number) {
  let running: Promise<CubingPass> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  /**
   * One bounded pass at `now` (seconds): up to SEGMENTS_PER_PASS segments of the current hour,
   * up to HOURS_PER_PASS closed hours, then, when none is left, a closed day's cubes merged from
   * its hours' (no entry read again).
   */
  async function pass(now: number): Promise<CubingPass> {
    const seg = await index.cubeSegments(now, SEGMENTS_PER_PASS);
    const { hours, more } = await index.cubeClosedHours(now, HOURS_PER_PASS);
    const days = more ? 0 : await index.cubeClosedDays(now, 1);
    const segments = seg.segments;
    if (days || hours || segments) logger.info({ days, hours, segments }, 'log cubes computed');
    return { days, hours, segments, more: more || days > 0 || seg.more };
  }

  /** Runs a pass unless one is running; another follows at once while work is left. */
  function run(now = Math.floor(Date.now() / 1000)): Promise<CubingPass> {
    if (running) return running;
    const current = pass(now)
      .catch((err): CubingPass => {
        logger.warn({ err }, 'computing log cubes failed; the next pass retries');
        return { days: 0, hours: 0, segments: 0, more: false };
      })
      .finally(() => {
        running = null;
      });
    running = current;
    void current.then((r) => {
      if (r.more && !stopped) setImmediate(() => void run());
    });
    return current;
  }

  return {
    run,
    start(): void {
      timer = setInterval(() => void run(), intervalMs);
      timer.unref();
      void run();
    },
    /** Stops the timer and waits for the pass in flight. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

export type LogCubingJob = ReturnType<typeof logCubingJob>;
