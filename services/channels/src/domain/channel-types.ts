import { CHANNEL_CATALOGUE, type ChannelTypeEntry } from '@aigw/common/channel-catalogue';

export { effectiveBaseUrl, isChannelType } from '@aigw/common/channel-catalogue';

/**
 * The channel types by number, from the one catalogue in services/common (channel-catalogue.ts):
 * display name, default host, key format, default `other` and the type's models.
 */
export const CHANNEL_TYPES: Readonly<Record<number, ChannelTypeEntry>> = Object.fromEntries(
  CHANNEL_CATALOGUE.map((e) => [e.type, e]),
);
