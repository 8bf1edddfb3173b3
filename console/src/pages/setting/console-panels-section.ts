/**
 * The dashboard panels (new-api's console settings): announcements, API addresses, FAQ and Uptime
 * Kuma status pages, each a JSON array with its switch. The gateway checks each list on save
 * (services/gateway/src/domain/console-panels.ts) and answers what is wrong; `[]` clears one.
 */
import type { SectionSpec } from './sections.ts';

export const CONSOLE_PANELS_SECTION: SectionSpec = {
  id: 'console-panels',
  title: 'opt.consolePanels',
  fields: [
    { key: 'console_setting.announcements_enabled', label: 'opt.announcementsEnabled', kind: 'switch' },
    {
      key: 'console_setting.announcements',
      label: 'opt.announcements',
      kind: 'json',
      placeholder: 'opt.announcementsPlaceholder',
      extra: 'opt.announcementsExtra',
    },
    { key: 'console_setting.api_info_enabled', label: 'opt.apiInfoEnabled', kind: 'switch' },
    {
      key: 'console_setting.api_info',
      label: 'opt.apiInfo',
      kind: 'json',
      placeholder: 'opt.apiInfoPlaceholder',
      extra: 'opt.apiInfoExtra',
    },
    { key: 'console_setting.faq_enabled', label: 'opt.faqEnabled', kind: 'switch' },
    {
      key: 'console_setting.faq',
      label: 'opt.faq',
      kind: 'json',
      placeholder: 'opt.faqPlaceholder',
      extra: 'opt.faqExtra',
    },
    { key: 'console_setting.uptime_kuma_enabled', label: 'opt.uptimeKumaEnabled', kind: 'switch' },
    {
      key: 'console_setting.uptime_kuma_groups',
      label: 'opt.uptimeKumaGroups',
      kind: 'json',
      placeholder: 'opt.uptimeKumaPlaceholder',
      extra: 'opt.uptimeKumaExtra',
    },
  ],
};
