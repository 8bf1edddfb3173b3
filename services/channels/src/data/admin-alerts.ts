import { type Logger, type Notification, type OptionsCache, type SendOptions, sendWebhook } from '@aigw/common';

/**
 * Admin alerts: each notification POSTed to the AdminWebhookUrl option (when set) in new-api's
 * webhook format, signed with AdminWebhookSecret; read on every alert, so a change applies at once.
 * A failed send is logged, never retried (an alert must not hold up the health consumer).
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
