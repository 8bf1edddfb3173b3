/**
 * The public status object of spec 01 section 3 (plus the wallet keys of spec 02 section 3), built
 * from the option values. It carries no secret.
 */
import { optionAccessors } from '@aigw/common/option-catalogue';
import { type SsoStatus, ssoStatus } from './sso-status.ts';

export interface PublicStatus extends SsoStatus {
  version: string;
  start_time: number;
  system_name: string;
  logo: string;
  footer_html: string;
  quota_per_unit: number;
  display_in_currency: boolean;
  display_token_stat: boolean;
  enable_drawing: boolean;
  enable_task: boolean;
  enable_data_export: boolean;
  chats: Record<string, string>[];
  data_export_default_time: string;
  default_collapse_sidebar: boolean;
  mj_notify_enabled: boolean;
  chat_link: string;
  chat_link2: string;
  email_verification: boolean;
  turnstile_check: boolean;
  /** new-api's checkin_enabled: the console shows the check-in button. */
  checkin_enabled: boolean;
  /** new-api's default_use_auto_group (DefaultUseAutoGroup): new tokens start in group auto. */
  default_use_auto_group: boolean;
  /** new-api's passkey_login: the login page offers a passkey. */
  passkey_login: boolean;
  turnstile_site_key: string;
  github_oauth: boolean;
  github_client_id: string;
  wechat_login: boolean;
  wechat_qrcode: string;
  telegram_oauth: boolean;
  telegram_bot_name: string;
  password_login_enabled: boolean;
  password_register_enabled: boolean;
  register_enabled: boolean;
  server_address: string;
  top_up_link: string;
  min_topup: number;
  price: number;
  enable_online_topup: boolean;
}

/**
 * Builds the status from option values. `secretsSet` tells which write-only options hold a value
 * (the payment switch depends on EpayKey being set without revealing it).
 */
export function buildPublicStatus(
  o: Record<string, string>,
  meta: { version: string; startTime: number; secretsSet: ReadonlySet<string> },
): PublicStatus {
  // Read with the catalogue's defaults, like every options cache (a key missing from `o` shows its default).
  const r = optionAccessors((key) => o[key]);
  const chats = r.json<unknown>('Chats');
  return {
    version: meta.version,
    start_time: meta.startTime,
    system_name: r.text('SystemName'),
    logo: r.text('Logo'),
    footer_html: r.text('Footer'),
    quota_per_unit: r.number('QuotaPerUnit'),
    display_in_currency: r.bool('DisplayInCurrencyEnabled'),
    display_token_stat: r.bool('DisplayTokenStatEnabled'),
    enable_drawing: r.bool('DrawingEnabled'),
    enable_task: r.bool('TaskEnabled'),
    enable_data_export: r.bool('DataExportEnabled'),
    chats: Array.isArray(chats) ? (chats as Record<string, string>[]) : [],
    data_export_default_time: r.text('DataExportDefaultTime'),
    default_collapse_sidebar: r.bool('DefaultCollapseSidebar'),
    mj_notify_enabled: r.bool('MjNotifyEnabled'),
    chat_link: r.text('ChatLink'),
    chat_link2: r.text('ChatLink2'),
    email_verification: r.bool('EmailVerificationEnabled'),
    turnstile_check: r.bool('TurnstileCheckEnabled'),
    checkin_enabled: r.bool('checkin_setting.enabled'),
    default_use_auto_group: r.bool('DefaultUseAutoGroup'),
    passkey_login: r.bool('passkey.enabled'),
    turnstile_site_key: r.text('TurnstileSiteKey'),
    github_oauth: r.bool('GitHubOAuthEnabled'),
    github_client_id: r.text('GitHubClientId'),
    wechat_login: r.bool('WeChatAuthEnabled'),
    wechat_qrcode: r.text('WeChatAccountQRCodeImageURL'),
    telegram_oauth: r.bool('TelegramOAuthEnabled'),
    telegram_bot_name: r.text('TelegramBotName'),
    password_login_enabled: r.bool('PasswordLoginEnabled'),
    password_register_enabled: r.bool('PasswordRegisterEnabled'),
    register_enabled: r.bool('RegisterEnabled'),
    server_address: r.text('ServerAddress'),
    top_up_link: r.text('TopUpLink'),
    min_topup: r.number('MinTopUp'),
    price: r.number('Price'),
    enable_online_topup: Boolean(o.PayAddress && o.EpayId && meta.secretsSet.has('EpayKey')),
    ...ssoStatus(r),
  };
}
