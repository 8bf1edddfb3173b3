import { describe, expect, it } from 'vitest';
import type { Json } from '../../domain/protocols/openai.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { promptRefusal, responseClock, sendable } from './realtime-bridge.ts';

const screen = (body: Json) => {
  if (JSON.stringify(body).includes('forbidden'))
    throw new RelayError(400, '请求内容包含敏感词：forbidden', 'sensitive_words_detected');
};
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

describe('promptRefusal', () => {
  it('when a prompt event holds a listed word, then an error event naming its event_id', () => {
    const e = promptRefusal(
      buf({
        type: 'conversation.item.create',
        event_id: 'ev1',
        item: { content: [{ type: 'input_text', text: 'forbidden' }] },
      }),
      screen,
    );
    expect(e).toMatchObject({
      type: 'error',
      error: { message: '请求内容包含敏感词：forbidden', code: 'sensitive_words_detected', event_id: 'ev1' },
    });
  });

  it('when a prompt event carries a session that is not an object, then an invalid_field error without event_id', () => {
    const e = promptRefusal(buf({ type: 'session.update', session: 'x' }), screen);
    expect(e).toMatchObject({ type: 'error', error: { code: 'invalid_field', event_id: null } });
  });

  it('when the event is clean, not a prompt event, or not JSON, then it goes upstream', () => {
    expect(promptRefusal(buf({ type: 'response.create', response: { instructions: 'hi' } }), screen)).toBeUndefined();
    expect(promptRefusal(buf({ type: 'input_audio_buffer.append', audio: 'forbidden' }), screen)).toBeUndefined();
    expect(promptRefusal(buf('"conversation.item.create" not json'), screen)).toBeUndefined();
  });
});

describe('responseClock', () => {
  it('when a response streams and ends with usage, then its timings from response.created and its number', () => {
    let t = 1000;
    const clock = responseClock(() => t);
    t = 2000;
    expect(clock(buf({ type: 'response.created' }))).toBeUndefined();
    t = 2300;
    expect(clock(buf({ type: 'response.audio_transcript.delta', delta: 'h' }))).toBeUndefined();
    t = 2500;
    clock(buf({ type: 'response.text.delta', delta: 'i' }));
    t = 3000;
    const done = clock(
      buf({ type: 'response.done', response: { usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } }),
    );
    expect(done).toMatchObject({ useTimeMs: 1000, firstTokenMs: 300, n: 1 });
    expect(done?.usage).toMatchObject({ promptTokens: 10, completionTokens: 5 });
    t = 3200;
    clock(buf({ type: 'response.created' }));
    t = 3500;
    const second = clock(buf({ type: 'response.done', response: { usage: { input_tokens: 1, output_tokens: 1 } } }));
    expect(second).toMatchObject({ n: 2, useTimeMs: 300, firstTokenMs: 0 });
  });

  it('when response.done has no usage or is not JSON, then nothing is billed', () => {
    const clock = responseClock(() => 0);
    expect(clock(buf({ type: 'response.done', response: { usage: null } }))).toBeUndefined();
    expect(clock(buf('"response.done" broken'))).toBeUndefined();
  });
});

describe('sendable', () => {
  it('when a close code is reserved for reports, then it is not sent', () => {
    expect([1000, 1008, 1011, 3000, 4999].every(sendable)).toBe(true);
    expect([1004, 1005, 1006, 1015, 999, 5000].some(sendable)).toBe(false);
  });
});
