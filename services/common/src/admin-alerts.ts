import type { ConsumerHealth } from './consumer-health.ts';
import type { Logger } from './logger.ts';
import { type Notification, type SendOptions, sendWebhook } from './notify.ts';
import type { OptionsCache } from './options-cache.ts';

/**
 * Admin alerts: each notification POSTed to the AdminWebhookUrl option (when set) in new-api's
 * webhook format, signed with AdminWebhookSecret; read on every alert, so a change applies at once.
 * A failed send is logged, never retried (an alert must not hold up the health consumer).
 * Channels alert on an auto-disabled channel, every service on a Kafka consumer that stalled.
 */
export function adminAlerts(
  options: Pick<OptionsCache, 'text'>,
  send: SendOptions,
  logger: Logger,
): (n: Notification) => void {
  return (n) => {
    const url = options.text('AdminWebhookUrl').trim();
    if (!url) return;
    sendWebhook(url, options.text('AdminWebhookSecret'), n, send).catch((err: unknown) =>
      logger.warn({ err, title: n.title }, 'admin alert not sent'),
    );
  };
}

/** The admin alert of a consumer that stalled (consumerRegistry.onStall): which service, which consumer, since when. */
export function stallNotification(service: string, consumer: string, h: ConsumerHealth): Notification {
  const since = new Date(h.sinceMs).toISOString();
  return {
    type: 'consumer_stalled',
    title: '消费者停滞',
    content: `服务 ${service} 的 Kafka 消费者 ${consumer} 自 ${since} 起停滞（有积压但没有进展，或离开了消费组），请检查 Kafka 与数据库`,
    values: [service, consumer, since],
  };
}
