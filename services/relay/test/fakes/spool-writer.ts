/**
 * A relay's usage path killed mid-flight (usage-spool.test.ts): publishes nothing of its own
 * accord, queues `COUNT` usage events through relayEvents with the spool in `SPOOL_DIR` (the real
 * producer on the real Kafka), then kills itself with SIGKILL before the 100 ms linger sends them.
 */
import { createKafka, createLogger, createPublisher } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import { openUsageSpool } from '../../src/data/usage-spool.ts';
import type { UsageRecord } from '../../src/domain/relay-request.ts';
import { relayEvents } from '../../src/transport/kafka/relay-events.ts';

const logger = createLogger('spool-writer');
const count = Number(process.env.COUNT);
const prefix = process.env.REQUEST_PREFIX as string;
const kafka = createKafka((process.env.KAFKA_BROKERS as string).split(','), 'spool-writer', logger);
const publisher = await createPublisher(kafka);
const events = relayEvents(publisher, logger, {
  lingerMs: 100,
  spool: openUsageSpool(process.env.SPOOL_DIR as string, logger),
});
for (let i = 0; i < count; i++) {
  events.usage({
    requestId: `${prefix}-${i}`,
    caller: {
      requestId: `${prefix}-${i}`,
      user: { id: 7, username: 'spool' },
      token: { id: 70, name: 'spool-token' },
      group: 'default',
      ip: '127.0.0.1',
      startedAt: 0,
    },
    model: 'gpt-4o-mini',
    upstreamModel: 'gpt-4o-mini',
    channelId: 1,
    channelsTried: [1],
    usage: { promptTokens: 10, completionTokens: 5 },
    quota: 30 + i,
    useTimeMs: 1,
    firstTokenMs: 0,
    isStream: false,
    type: LogType.CONSUME,
    statusCode: 200,
    errorMessage: '',
    price: undefined,
    groupRatio: 1,
    other: {},
  } as unknown as UsageRecord);
}
process.kill(process.pid, 'SIGKILL');
