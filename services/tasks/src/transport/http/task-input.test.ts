import { describe, expect, it } from 'vitest';
import { MjError } from '../../domain/mj-error.ts';
import { generationBody, mjSubmitBody, parseInput, videoListQuery } from './task-input.ts';

describe('task route input', () => {
  it('when a body matches its schema, then it comes back whole, unknown keys included (they go upstream)', () => {
    expect(parseInput(mjSubmitBody, { prompt: 'a cat', accountFilter: { modes: ['FAST'] } })).toEqual({
      prompt: 'a cat',
      accountFilter: { modes: ['FAST'] },
    });
    expect(parseInput(generationBody, { model: 'm', duration: '5', seed: null })).toEqual({
      model: 'm',
      duration: '5',
      seed: null,
    });
  });

  it('when a field has the wrong type, then a 400 MjError names the part and the field', () => {
    const err = (() => {
      try {
        parseInput(mjSubmitBody, { prompt: 1 });
      } catch (e) {
        return e;
      }
    })() as MjError;
    expect(err).toBeInstanceOf(MjError);
    expect([err.status, err.code]).toEqual([400, 4]);
    expect(err.description).toMatch(/^请求体 prompt 无效：/);
    expect(() => parseInput(generationBody, { metadata: [1] })).toThrow(/^请求体 metadata 无效：/);
    expect(() => parseInput(videoListQuery, { limit: 5 }, 'query')).toThrow(/^查询参数 limit 无效：/);
  });
});
