import { afterAll, describe, expect, it } from 'vitest';
import { chatPromptParts } from '../domain/token-estimate.ts';
import { createTokenizer, LONG_RUN, splitForCounting } from './tokenizer.ts';

// Exact counts are checked with a patient caller: under a loaded machine the default wait
// (DEFAULT_WAIT_MS) can pass before the worker answers, and the caller then gets the estimate by
// design. Latency is measured by the tokenizer benchmark (bench/run.ts --only=tokenizer).
const PATIENT = { waitMs: 10_000 };

describe('tokenizer', () => {
  const tokenizer = createTokenizer(PATIENT);
  afterAll(() => tokenizer.close());

  it('when the worker is ready, then OpenAI models are counted with tiktoken', async () => {
    expect(await tokenizer.ready).toBe(true);
    expect(await tokenizer.count(['hello world'], 'gpt-4o-mini')).toBe(2);
    expect(await tokenizer.count(['hello world', 'hello world'], 'gpt-3.5-turbo')).toBe(4);
  }, 60_000);

  it('when the model is not OpenAI, then the cheap estimate is used', async () => {
    expect(await tokenizer.count(['abcdefgh'], 'claude-3-5-sonnet')).toBe(2);
    expect(await tokenizer.count(['你好世界'], 'gemini-2.5-pro')).toBe(4);
  });

  it('when a chat prompt is estimated, then 3 per message, 3 per name and 3 at the end are added', async () => {
    await tokenizer.ready;
    const { texts, fixed } = chatPromptParts({
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'hello world' },
        { role: 'user', name: 'bob', content: 'hi' },
      ],
    });
    expect(fixed + (await tokenizer.count(texts, 'gpt-4o'))).toBe(3 + 3 + 2 + 3 + 3 + 1 + 1);
  });
});

describe('tokenizer bounds', () => {
  const tokenizer = createTokenizer(PATIENT);
  afterAll(() => tokenizer.close());

  it('when texts hold runs longer than LONG_RUN, then only those runs are estimated and the rest is split off exactly', () => {
    const word = 'x'.repeat(LONG_RUN + 10);
    const { exact, cheap } = splitForCounting([`hello ${word} world`, 'short']);
    expect(exact).toEqual(['hello ', ' world', 'short']);
    expect(cheap).toBe(Math.ceil((LONG_RUN + 10) / 4));
    // Spaces, punctuation and digits have their own runs.
    expect(splitForCounting([' '.repeat(100)]).exact).toEqual([]);
    expect(splitForCounting(['!'.repeat(100)]).exact).toEqual([]);
    expect(splitForCounting(['a b '.repeat(100)]).exact).toEqual(['a b '.repeat(100)]);
  });

  it('when texts exceed the exact budget, then the excess is estimated', () => {
    const { exact, cheap } = splitForCounting(['abcd abcd', 'efgh efgh'], 12);
    expect(exact).toEqual(['abcd abcd', 'efg']);
    expect(cheap).toBe(2);
  });

  it('when a prompt is an 8,000-letter word, then it is estimated instead of run through BPE, and a normal prompt queued behind it keeps its exact count', async () => {
    expect(await tokenizer.ready).toBe(true);
    const word = Array.from({ length: 8000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
    const [long, normal] = await Promise.all([
      tokenizer.count([word], 'gpt-4o'),
      tokenizer.count(['hello world'], 'gpt-4o'),
    ]);
    // BPE would give another count (and took 3.2 s on this word unbounded); the estimate is
    // length / 4 exactly.
    expect(long).toBe(2000);
    expect(normal).toBe(2);
  });

  it('when the worker is busier than the caller may wait, then the caller gets the cheap estimate in time', async () => {
    const impatient = createTokenizer({ waitMs: 1 });
    try {
      await impatient.ready;
      // About 30 ms of BPE: the worker cannot answer within 1 ms.
      const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(5000);
      const n = await impatient.count([prose], 'gpt-4o');
      expect(n).toBe(Math.ceil(prose.length / 4));
    } finally {
      await impatient.close();
    }
  }, 60_000);
});
