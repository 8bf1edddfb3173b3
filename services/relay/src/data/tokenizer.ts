/**
 * tiktoken in a worker thread. Building the o200k_base table takes seconds of CPU and BPE on a
 * long prompt takes tens of milliseconds: neither may stall the relay's event loop. Until the
 * worker is ready (or if it dies) counts fall back to the cheap estimate.
 *
 * What a count may cost is bounded, so that one client cannot make every other request wait:
 * - js-tiktoken's merge step is quadratic in the length of a pre-tokenized piece (an 8,000-letter
 *   word took 3.2 s). Runs of letters, of punctuation or of white space longer than
 *   {@link LONG_RUN} characters (no real word is) are estimated with {@link cheapTokens} instead of
 *   merged; everything else is counted exactly.
 * - Only the first {@link EXACT_CHARS} characters of a request are counted exactly; the rest is
 *   estimated cheaply (about 30 ms of worker time for a full budget of prose).
 * - A caller waits at most `waitMs` for the worker (it may be busy with another request's count);
 *   past that it gets the cheap estimate and the worker's late answer is dropped. While
 *   {@link MAX_QUEUED} counts wait in the worker, new ones are estimated at once.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { cheapCounter, cheapTokens, isOpenAIModel, type TokenCounter } from '../domain/token-estimate.ts';

/** Longest run of one character class that BPE sees; longer runs are estimated. */
export const LONG_RUN = 64;
/** Characters of one request counted exactly; the rest is estimated. */
export const EXACT_CHARS = 256 * 1024;
/** How long a caller waits for the worker by default before taking the cheap estimate. */
export const DEFAULT_WAIT_MS = 50;
/** Counts posted to the worker and not answered yet (abandoned ones included) before callers stop queueing. */
export const MAX_QUEUED = 64;

// The worker receives texts already cut by splitForCounting: `exact` parts go through BPE,
// `cheap` tokens were estimated on this side.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Tiktoken } = require(workerData.lite);
const ranks = require(workerData.ranks);
const enc = new Tiktoken(ranks.default || ranks);
// Building the table leaves ~100 MB of garbage, which Node.js 24 collects in incremental steps on
// this thread's event loop for a second or so: counts answered meanwhile wait 50-200 ms, past the
// callers' wait (DEFAULT_WAIT_MS). Say ready once a 10 ms timer fires on time three times in a
// row (at most 3 s after the build).
const built = Date.now();
let onTime = 0;
const settle = () => {
  const t = performance.now();
  setTimeout(() => {
    onTime = performance.now() - t < 15 ? onTime + 1 : 0;
    if (onTime >= 3 || Date.now() - built > 3000) parentPort.postMessage({ ready: true });
    else settle();
  }, 10);
};
settle();
parentPort.on('message', ({ id, texts }) => {
  let n = 0;
  try { for (const t of texts) n += enc.encode(t, 'all').length; } catch (e) { n = -1; }
  parentPort.postMessage({ id, n });
});
`;

const LONG_RUNS = new RegExp(
  `[\\p{L}\\p{M}]{${LONG_RUN + 1},}|[^\\s\\p{L}\\p{M}\\p{N}]{${LONG_RUN + 1},}|\\s{${LONG_RUN + 1},}|\\p{N}{${LONG_RUN + 1},}`,
  'gu',
);

/**
 * Splits texts into what BPE counts exactly and a cheap estimate of the rest (long runs, and
 * everything past the exact budget). Linear in the texts' length.
 */
export function splitForCounting(texts: string[], budget = EXACT_CHARS): { exact: string[]; cheap: number } {
  const exact: string[] = [];
  let cheap = 0;
  let left = budget;
  for (const text of texts) {
    let t = text;
    if (left <= 0) {
      cheap += cheapTokens(t);
      continue;
    }
    if (t.length > left) {
      cheap += cheapTokens(t.slice(left));
      t = t.slice(0, left);
    }
    left -= t.length;
    if (t.length <= LONG_RUN) {
      exact.push(t);
      continue;
    }
    let last = 0;
    LONG_RUNS.lastIndex = 0;
    for (let m = LONG_RUNS.exec(t); m !== null; m = LONG_RUNS.exec(t)) {
      if (m.index > last) exact.push(t.slice(last, m.index));
      cheap += cheapTokens(m[0]);
      last = m.index + m[0].length;
    }
    if (last === 0) exact.push(t);
    else if (last < t.length) exact.push(t.slice(last));
  }
  return { exact, cheap };
}

export interface Tokenizer extends TokenCounter {
  /** Resolves when tiktoken is loaded (or failed to load). */
  ready: Promise<boolean>;
  close(): Promise<void>;
}

/** Starts the tokenizer worker; counting works at once (cheaply until the worker is ready). */
export function createTokenizer(opts: { waitMs?: number } = {}): Tokenizer {
  const waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  const require = createRequire(import.meta.url);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { lite: require.resolve('js-tiktoken/lite'), ranks: require.resolve('js-tiktoken/ranks/o200k_base') },
  });
  worker.unref();
  let isReady = false;
  let seq = 0;
  let queued = 0;
  const pending = new Map<number, (n: number) => void>();
  const ready = new Promise<boolean>((resolve) => {
    worker.on('message', (msg: { ready?: boolean; id?: number; n?: number }) => {
      if (msg.ready) {
        isReady = true;
        resolve(true);
        return;
      }
      queued--;
      const done = pending.get(msg.id ?? -1);
      pending.delete(msg.id ?? -1);
      done?.(msg.n ?? -1);
    });
    const fail = () => {
      isReady = false;
      resolve(false);
      for (const done of pending.values()) done(-1);
      pending.clear();
      queued = 0;
    };
    worker.on('error', fail);
    worker.on('exit', fail);
  });
  const cheapAll = (texts: string[]) => texts.reduce((s, t) => s + cheapTokens(t), 0);
  return {
    ready,
    async count(texts, model, opts) {
      const wait = opts?.waitMs ?? waitMs;
      // A caller that may wait (an explicit count) also waits for the worker to finish loading.
      if (!isReady && wait > waitMs && isOpenAIModel(model))
        await Promise.race([ready, new Promise((r) => setTimeout(r, wait).unref())]);
      if (!isReady || !isOpenAIModel(model)) return cheapCounter.count(texts, model);
      const { exact, cheap } = splitForCounting(texts);
      if (exact.length === 0) return cheap;
      if (queued >= MAX_QUEUED) return cheapAll(exact) + cheap;
      const id = ++seq;
      const n = await new Promise<number>((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(-1);
        }, wait);
        pending.set(id, (v) => {
          clearTimeout(timer);
          resolve(v);
        });
        queued++;
        worker.postMessage({ id, texts: exact });
      });
      return n >= 0 ? n + cheap : cheapAll(exact) + cheap;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}
