import {
  IconApps,
  IconCalendarClock,
  IconCommon,
  IconDashboard,
  IconExperiment,
  IconGift,
  IconHistory,
  IconImage,
  IconMessage,
  IconSafe,
  IconSettings,
  IconStorage,
  IconTag,
  IconUserGroup,
} from '@arco-design/web-react/icon';
import type { ComponentType, CSSProperties } from 'react';
import type { IconName } from '../../routes.ts';

const icons: Record<IconName, ComponentType<{ style?: CSSProperties; className?: string }>> = {
  playground: IconExperiment,
  pricing: IconTag,
  channel: IconStorage,
  models: IconApps,
  chat: IconMessage,
  token: IconSafe,
  redemption: IconGift,
  topup: IconCommon,
  user: IconUserGroup,
  log: IconHistory,
  detail: IconDashboard,
  midjourney: IconImage,
  task: IconCalendarClock,
  setting: IconSettings,
};

/** The Arco icon for a route's icon name. */
export default function MenuIcon({ name, className }: { name?: IconName; className?: string }) {
  if (!name) return null;
  const Icon = icons[name];
  return <Icon className={className} />;
}
