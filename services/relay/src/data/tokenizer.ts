/**
 * tiktoken in a worker thread. Building the o200k_base table takes seconds of CPU and BPE on a
 * long prompt takes tens of milliseconds: neither may stall the relay's event loop. Until the
 * worker is ready (or if it dies) counts fall back to the cheap estimate.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { cheapCounter, cheapTokens, isOpenAIModel, type TokenCounter } from '../domain/token-estimate.ts';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Tiktoken } = require(workerData.lite);
const ranks = require(workerData.ranks);
const enc = new Tiktoken(ranks.default || ranks);
parentPort.postMessage({ ready: true });
parentPort.on('message', ({ id, texts }) => {
  let n = 0;
  try { for (const t of texts) n += enc.encode(t, 'all').length; } catch (e) { n = -1; }
  parentPort.postMessage({ id, n });
});
`;

export interface Tokenizer extends TokenCounter {
  /** Resolves when tiktoken is loaded (or failed to load). */
  ready: Promise<boolean>;
  close(): Promise<void>;
}

/** Starts the tokenizer worker; counting works at once (cheaply until the worker is ready). */
export function createTokenizer(): Tokenizer {
  const require = createRequire(import.meta.url);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { lite: require.resolve('js-tiktoken/lite'), ranks: require.resolve('js-tiktoken/ranks/o200k_base') },
  });
  worker.unref();
  let isReady = false;
  let seq = 0;
  const pending = new Map<number, (n: number) => void>();
  const ready = new Promise<boolean>((resolve) => {
    worker.on('message', (msg: { ready?: boolean; id?: number; n?: number }) => {
      if (msg.ready) {
        isReady = true;
        resolve(true);
        return;
      }
      const done = pending.get(msg.id ?? -1);
      pending.delete(msg.id ?? -1);
      done?.(msg.n ?? -1);
    });
    const fail = () => {
      isReady = false;
      resolve(false);
      for (const done of pending.values()) done(-1);
      pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
  });
  return {
    ready,
    async count(texts, model) {
      if (!isReady || !isOpenAIModel(model)) return cheapCounter.count(texts, model);
      const id = ++seq;
      const n = await new Promise<number>((resolve) => {
        pending.set(id, resolve);
        worker.postMessage({ id, texts });
      });
      return n >= 0 ? n : texts.reduce((s, t) => s + cheapTokens(t), 0);
    },
    close: async () => {
      await worker.terminate();
    },
  };
}
