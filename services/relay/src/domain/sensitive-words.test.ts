import { describe, expect, it } from 'vitest';
import { RelayError } from './relay-error.ts';
import { buildMatcher, parseWordList, promptTexts, sensitiveScreen } from './sensitive-words.ts';

/** Every listed word occurring in the text, by plain search (the reference the automaton must equal). */
const naive = (words: string[], text: string) => {
  const t = text.toLowerCase();
  return words.filter((w) => t.includes(w)).sort();
};

describe('sensitive-word matcher', () => {
  it('when words overlap and share suffixes, then every listed word in the text is found once', () => {
    const m = buildMatcher(['he', 'she', 'his', 'hers']);
    expect(m.find('ushers', 10).sort()).toEqual(['he', 'hers', 'she']);
    expect(m.find('this is his', 10).sort()).toEqual(['his']);
    expect(m.find('nothing here?', 10)).toEqual(['he']);
    expect(m.test('abc')).toBe(false);
  });

  it('when the text differs in case or is Chinese, then the words still match', () => {
    const m = buildMatcher(parseWordList('  Forbidden \n\n敏感词\r\nforbidden\n'));
    expect(m.size).toBe(2);
    expect(m.find('This is FORBIDDEN text')).toEqual(['forbidden']);
    expect(m.find('这里有一个敏感词。')).toEqual(['敏感词']);
    expect(m.find('敏感 词')).toEqual([]);
  });

  it('when the list is empty, then nothing matches', () => {
    const m = buildMatcher(parseWordList(''));
    expect(m.size).toBe(0);
    expect(m.test('anything at all')).toBe(false);
  });

  it('when compared with a plain search on random words and texts, then the results are the same', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 1;
      return seed % n;
    };
    const alphabet = 'abcAB词语';
    const word = (len: number) =>
      Array.from({ length: len }, () => alphabet[rnd(alphabet.length)])
        .join('')
        .toLowerCase();
    for (let round = 0; round < 200; round++) {
      const words = [...new Set(Array.from({ length: 1 + rnd(30) }, () => word(1 + rnd(5))))];
      const text = Array.from({ length: rnd(60) }, () => alphabet[rnd(alphabet.length)]).join('');
      const m = buildMatcher(words);
      expect(m.find(text, 1000).sort()).toEqual(naive(words, text));
      expect(m.test(text)).toBe(naive(words, text).length > 0);
    }
  });

  it('when the limit is reached, then the search stops with that many words', () => {
    const m = buildMatcher(['a', 'b', 'c', 'd']);
    expect(m.find('abcd', 2)).toEqual(['a', 'b']);
  });
});

describe('prompt texts of each client format', () => {
  it('when given OpenAI chat, completions, embeddings and rerank bodies, then their texts are read and image data is not', () => {
    const chat = promptTexts({
      model: 'm',
      messages: [
        { role: 'system', content: 'sys text' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'part text' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,c2VjcmV0' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{"q":"args"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'tool result' },
      ],
    });
    expect(chat).toEqual(['sys text', 'part text', 'tool result']);
    expect(promptTexts({ model: 'm', prompt: ['one', 'two'] })).toEqual(['one', 'two']);
    expect(promptTexts({ model: 'm', input: 'embed me' })).toEqual(['embed me']);
    expect(promptTexts({ model: 'm', query: 'q', documents: ['d1', { text: 'd2' }] })).toEqual(['q', 'd1', 'd2']);
  });

  it('when given Claude, Gemini and Responses bodies, then their system and message texts are read', () => {
    expect(
      promptTexts({
        model: 'c',
        system: [{ type: 'text', text: 'claude sys' }],
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'res' }] }],
          },
          { role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'AAAA' } }, 'plain'] },
        ],
      }),
    ).toEqual(['res', 'plain', 'claude sys']);
    expect(
      promptTexts({
        systemInstruction: { parts: [{ text: 'gem sys' }] },
        contents: [{ role: 'user', parts: [{ text: 'gem user' }, { inlineData: { mimeType: 'x', data: 'BBBB' } }] }],
      }),
    ).toEqual(['gem user', 'gem sys']);
    expect(
      promptTexts({
        instructions: 'be brief',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'resp text' }] }],
      }).sort(),
    ).toEqual(['be brief', 'resp text']);
  });

  it('when given a multipart form, then its prompt field is read', () => {
    const f = new FormData();
    f.set('model', 'whisper-1');
    f.set('prompt', 'transcribe this');
    expect(promptTexts(f)).toEqual(['transcribe this']);
  });
});

describe('sensitive screen', () => {
  function optionsOf(values: Record<string, string>) {
    const listeners: ((k: string, v: string) => void)[] = [];
    return {
      get: (k: string) => values[k],
      bool: (k: string) => values[k] === 'true',
      onChange: (l: (k: string, v: string) => void) => listeners.push(l),
      set(k: string, v: string) {
        values[k] = v;
        for (const l of listeners) l(k, v);
      },
    };
  }
  const body = { model: 'm', messages: [{ role: 'user', content: 'tell me about Contraband now' }] };

  it('when both switches are on and a listed word is in the prompt, then a 400 names the word', () => {
    const o = optionsOf({
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'true',
      SensitiveWords: 'contraband',
    });
    const screen = sensitiveScreen(o);
    let err: unknown;
    try {
      screen.check(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RelayError);
    expect((err as RelayError).status).toBe(400);
    expect((err as RelayError).code).toBe('sensitive_words_detected');
    expect((err as RelayError).message).toBe('请求内容包含敏感词：contraband');
  });

  it('when either switch is off, then the prompt passes', () => {
    const o = optionsOf({
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'false',
      SensitiveWords: 'contraband',
    });
    const screen = sensitiveScreen(o);
    expect(() => screen.check(body)).not.toThrow();
    o.set('CheckSensitiveOnPromptEnabled', 'true');
    expect(() => screen.check(body)).toThrow(RelayError);
    o.set('CheckSensitiveEnabled', 'false');
    expect(() => screen.check(body)).not.toThrow();
  });

  it('when the word list changes, then the automaton is rebuilt with the new words', () => {
    const o = optionsOf({
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'true',
      SensitiveWords: 'other',
    });
    const screen = sensitiveScreen(o);
    expect(() => screen.check(body)).not.toThrow();
    o.set('SensitiveWords', 'other\ncontraband');
    expect(screen.matcher().size).toBe(2);
    expect(() => screen.check(body)).toThrow('contraband');
  });
});
