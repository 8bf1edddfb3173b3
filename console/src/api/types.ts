/** Every /api answer is wrapped in this envelope. */
export interface ApiResponse<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
}

/** One configured chat target: display name -> link template. */
export type ChatLinkMap = Record<string, string>;

/** The public status object from GET /api/status (spec 01 section 3, spec 02 section 3). */
export interface Status {
  system_name?: string;
  logo?: string;
  footer_html?: string;
  quota_per_unit?: number;
  display_in_currency?: boolean;
  enable_drawing?: boolean;
  enable_task?: boolean;
  enable_data_export?: boolean;
  chats?: ChatLinkMap[];
  data_export_default_time?: 'hour' | 'day' | 'week' | string;
  default_collapse_sidebar?: boolean;
  mj_notify_enabled?: boolean;
  chat_link?: string;
  chat_link2?: string;
  email_verification?: boolean;
  turnstile_check?: boolean;
  /** new-api's check-in switch (checkin_setting.enabled). */
  checkin_enabled?: boolean;
  /** new-api's default_use_auto_group (DefaultUseAutoGroup): new tokens start in group auto. */
  default_use_auto_group?: boolean;
  /** new-api's passkey_login (passkey.enabled): the login page offers a passkey. */
  passkey_login?: boolean;
  turnstile_site_key?: string;
  github_oauth?: boolean;
  github_client_id?: string;
  wechat_login?: boolean;
  wechat_qrcode?: string;
  telegram_oauth?: boolean;
  telegram_bot_name?: string;
  server_address?: string;
  top_up_link?: string;
  min_topup?: number;
  enable_online_topup?: boolean;
  version?: string;
  start_time?: number;
}

/** Role numbers (spec 01 section 6). */
export const Role = { common: 1, admin: 10, root: 100 } as const;

/** The user record stored locally after a login (subset the console relies on). */
export interface User {
  id: number;
  username: string;
  display_name?: string;
  role: number;
  status?: number;
  group?: string;
  email?: string;
  quota?: number;
  used_quota?: number;
  request_count?: number;
  [key: string]: unknown;
}
