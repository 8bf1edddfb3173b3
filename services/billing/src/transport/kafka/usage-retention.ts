import type { createKafka } from '@aigw/common';

/** kafkajs' ConfigResourceTypes.TOPIC. */
const TOPIC_RESOURCE = 2;

/**
 * How long the broker keeps a topic's events (`retention.ms`, the topic's own or the broker's
 * default); null when it keeps them for ever (-1) or does not say.
 */
export async function topicRetentionMs(kafka: ReturnType<typeof createKafka>, topic: string): Promise<number | null> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['retention.ms'] }],
    });
    const value = Number(resources[0]?.configEntries.find((c) => c.configName === 'retention.ms')?.configValue);
    return Number.isFinite(value) && value > 0 ? value : null;
  } finally {
    await admin.disconnect();
  }
}
