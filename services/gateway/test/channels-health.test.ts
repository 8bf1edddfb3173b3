import { randomUUID } from 'node:crypto';
import { connectMongo, createKafka, createLogger, createPublisher, type Publisher, topicName } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelHealthEvent_Kind, ChannelHealthEventSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, eventually, setOptions, startMoneyStack, userApi } from './billing-harness.ts';

interface ChannelJson {
  id: number;
  status: number;
  other_info: string;
  used_quota: number;
}

describe('channel health events: automatic disable and enable', () => {
  let stack: Stack;
  let admin: Api;
  let publisher: Publisher;
  /** The channels service's database (the health consumer records each event id it handled). */
  let channelsDb: Awaited<ReturnType<typeof connectMongo>>;
  beforeAll(async () => {
    stack = await startMoneyStack();
    admin = (await userApi(stack, { role: 10 })).api;
    publisher = await createPublisher(
      createKafka(stack.env.KAFKA_BROKERS?.split(',') ?? [], 'health-test', createLogger('test', 'warn')),
    );
    channelsDb = await connectMongo(stack.env.MONGO_URL as string, `aigw_channels_${stack.id}`);
  });
  afterAll(async () => {
    await channelsDb?.close();
    await publisher?.disconnect();
    await stack?.stop();
  });

  const create = async (fields: Record<string, unknown> = {}) => {
    const res = await admin.post<number[]>('/channel/', { name: 'h', type: 1, key: 'k', models: 'm', ...fields });
    return res.body.data?.[0] as number;
  };
  const status = async (id: number) => (await admin.get<ChannelJson>(`/channel/${id}`)).body.data as ChannelJson;
  const report = (
    channelId: number,
    kind: ChannelHealthEvent_Kind,
    extra: { shouldDisable?: boolean; eventId?: string } = {},
  ) =>
    publisher.publish(
      topicName(TOPICS.channelHealth),
      ChannelHealthEventSchema,
      {
        eventId: extra.eventId ?? randomUUID(),
        occurredAtMs: Date.now(),
        channelId,
        kind,
        statusCode: 401,
        errorMessage: 'Incorrect API key provided',
        shouldDisable: extra.shouldDisable ?? false,
      },
      String(channelId),
    );
  /**
   * Reports a failure that does not mean a bad key (a no-op) and waits until the channels service
   * recorded handling it: a channel's events share a partition and are handled in order, so every
   * report before it has been handled too. What a 'nothing changed' check waits for.
   */
  const handled = async (channelId: number) => {
    const eventId = randomUUID();
    await report(channelId, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: false, eventId });
    await eventually(
      () => channelsDb.collection<{ _id: string }>('seen_health').findOne({ _id: eventId }),
      (d) => d !== null,
      { timeoutMs: 20_000, what: `the marker health event of channel ${channelId} handled` },
    );
  };

  it('when the options are off, then an unusable-key report changes nothing', async () => {
    const id = await create();
    await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true });
    await handled(id);
    expect((await status(id)).status).toBe(1);
  });

  it('when auto-disable is on, then an unusable key sets status 3 with the reason and time; auto_ban 0 is spared', async () => {
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'true', AutomaticEnableChannelEnabled: 'true' });
    const id = await create();
    const spared = await create({ auto_ban: 0 });
    // Reported until the channels service has the options (they arrive through Kafka too).
    const ch = await eventually(
      async () => {
        await report(spared, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true });
        await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true });
        await new Promise((r) => setTimeout(r, 300));
        return status(id);
      },
      (c) => c.status === 3,
      40_000,
    );
    expect(ch.status).toBe(3);
    const info = JSON.parse(ch.other_info) as { status_reason: string; status_time: number };
    expect(info.status_reason).toBe('Incorrect API key provided');
    expect(info.status_time).toBeGreaterThan(0);
    expect((await status(spared)).status).toBe(1);

    // A success brings it back (auto-enable), and replaying the old failure changes nothing.
    // Reported until the channels service has AutomaticEnableChannelEnabled too (each option
    // travels on its own); a success for an enabled channel changes nothing.
    const failureId = randomUUID();
    const back = await eventually(
      async () => {
        await report(id, ChannelHealthEvent_Kind.SUCCESS);
        await new Promise((r) => setTimeout(r, 300));
        return status(id);
      },
      (c) => c.status === 1,
      { timeoutMs: 40_000, what: 'the channel enabled again by a success' },
    );
    expect(back.status).toBe(1);
    await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true, eventId: failureId });
    await eventually(
      () => status(id),
      (c) => c.status === 3,
    );
    await admin.put('/channel/', { id, status: 1 });
    await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true, eventId: failureId });
    await handled(id);
    expect((await status(id)).status).toBe(1);
  });

  it('when a channel was disabled by hand, then a success report leaves it off', async () => {
    const id = await create();
    await admin.put('/channel/', { id, status: 2 });
    await report(id, ChannelHealthEvent_Kind.SUCCESS);
    await handled(id);
    expect((await status(id)).status).toBe(2);
  });

  it('when a failure does not mean a bad key, then the channel stays on', async () => {
    const id = await create();
    await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: false });
    await handled(id);
    expect((await status(id)).status).toBe(1);
  });

  it('when usage events name a channel, then its used quota grows once per event', async () => {
    const id = await create();
    const usage = (eventId: string, quota: number) =>
      publisher.publish(
        topicName(TOPICS.usage),
        UsageEventSchema,
        { eventId, occurredAtMs: Date.now(), requestId: eventId, userId: 1, channelId: id, quota, type: 2 },
        '1',
      );
    const first = randomUUID();
    await usage(first, 120);
    await usage(first, 120);
    await usage(randomUUID(), 3);
    // A marker after them on the same key (the same partition, consumed in order): once its 1000
    // is counted, the duplicate before it has been handled too.
    await usage(randomUUID(), 1000);
    const ch = await eventually(
      () => status(id),
      (c) => c.used_quota >= 1000,
      { timeoutMs: 20_000, what: 'the marker usage counted' },
    );
    expect(ch.used_quota).toBe(1123);
  });
});
