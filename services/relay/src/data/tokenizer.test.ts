import { afterAll, describe, expect, it } from 'vitest';
import { chatPromptParts } from '../domain/token-estimate.ts';
import { createTokenizer } from './tokenizer.ts';

describe('tokenizer', () => {
  const tokenizer = createTokenizer();
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
