import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectMongo, createKafka, createLogger, createPublisher, type Publisher, topicName } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelHealthEvent_Kind, ChannelHealthEventSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { type Api, setOptions, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
    // The admin alert receiver listens on loopback.
    stack = await startMoneyStack([], { NOTIFY_PRIVATE: 'true' });
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

  it('when AdminWebhookUrl is set and a channel is auto-disabled, then the admins get one signed webhook naming the channel and the reason', async () => {
    const hooks: { signature: string; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        hooks.push({ signature: String(req.headers['x-webhook-signature']), body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const port = (receiver.address() as AddressInfo).port;
      const bad = await admin.put<unknown>('/option/', { key: 'AdminWebhookUrl', value: 'not a url' });
      expect(bad.body.success).toBe(false);
      await setOptions(stack, {
        AdminWebhookUrl: `http://127.0.0.1:${port}/alerts`,
        AdminWebhookSecret: 'admin-secret',
        AutomaticDisableChannelEnabled: 'true',
      });
      const id = await create({ name: 'alerting' });
      const mine = () => hooks.filter((h) => h.body.includes(`（#${id}）`));
      // Reported until the channels service has the options (each travels through Kafka).
      await eventually(
        async () => {
          await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true });
          await new Promise((r) => setTimeout(r, 300));
          return mine().length;
        },
        (n) => n >= 1,
        { timeoutMs: 40_000, what: 'the admin alert of the disabled channel' },
      );
      // More failures of the disabled channel, then a marker: still the one alert.
      await report(id, ChannelHealthEvent_Kind.FAILURE, { shouldDisable: true });
      await handled(id);
      expect(mine()).toHaveLength(1);
      const hook = mine()[0] as { signature: string; body: string };
      expect(hook.signature).toBe(createHmac('sha256', 'admin-secret').update(hook.body).digest('hex'));
      expect(JSON.parse(hook.body)).toMatchObject({
        type: 'channel_update',
        title: `通道「alerting」（#${id}）已被禁用`,
        content: `通道「alerting」（#${id}）已被禁用，原因：Incorrect API key provided`,
        values: ['Incorrect API key provided'],
      });
    } finally {
      await setOptions(stack, { AdminWebhookUrl: '' });
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
