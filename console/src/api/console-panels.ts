import { request } from './request.ts';

/** One announcement of the dashboard (new-api's console_setting.announcements). */
export interface Announcement {
  content: string;
  publishDate: string;
  type?: 'default' | 'ongoing' | 'success' | 'warning' | 'error';
  extra?: string;
}

export interface ApiInfo {
  url: string;
  route: string;
  description: string;
  color: string;
}

export interface Faq {
  question: string;
  answer: string;
}

/** GET /api/console/panels: the lists of the panels switched on (new-api's /api/status names). */
export interface ConsolePanels {
  announcements_enabled: boolean;
  announcements: Announcement[];
  api_info_enabled: boolean;
  api_info: ApiInfo[];
  faq_enabled: boolean;
  faq: Faq[];
  uptime_kuma_enabled: boolean;
}

export interface UptimeGroup {
  categoryName: string;
  monitors: { name: string; uptime: number; status: number; group: string }[];
}

export const getConsolePanels = () => request<ConsolePanels>('GET', '/api/console/panels');

/** GET /api/uptime/status: the Uptime Kuma status pages, fetched by the server. */
export const getUptimeStatus = () => request<UptimeGroup[]>('GET', '/api/uptime/status');
