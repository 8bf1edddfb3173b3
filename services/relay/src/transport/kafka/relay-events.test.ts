import { ChannelHealthEvent_Kind } from '@aigw/proto/events/v1/events';
import { describe, expect, it } from 'vitest';
import { healthEvent } from './relay-events.ts';

const rec = {
  requestId: 'r1',
  channelId: 7,
  statusCode: 429,
  message: 'x'.repeat(600),
  shouldDisable: false,
  model: 'gpt-4o',
  responseTimeMs: 120,
  keyHash: '',
};

describe('healthEvent', () => {
  it('when a single-key channel fails, then one failure event per request and channel, message cut to 500', () => {
    const ev = healthEvent(rec);
    expect(ev).toMatchObject({
      eventId: 'r1:7',
      channelId: 7,
      kind: ChannelHealthEvent_Kind.FAILURE,
      statusCode: 429,
      shouldDisable: false,
      model: 'gpt-4o',
      responseTimeMs: 120,
      requestId: 'r1',
      keyHash: '',
    });
    expect(ev.errorMessage).toHaveLength(500);
  });

  it('when a key of a multi-key channel fails, then the key is part of the event id', () => {
    expect(healthEvent({ ...rec, keyHash: 'abc' }).eventId).toBe('r1:7:abc');
  });
});
