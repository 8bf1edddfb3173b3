/**
 * The public status object of spec 01 section 3 (plus the wallet keys of spec 02 section 3), built
 * from the option values. It carries no secret.
 */
export interface PublicStatus {
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

const flag = (v: string | undefined) => v === 'true';
const num = (v: string | undefined, fallback: number) => {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isFinite(n) ? n : fallback;
};

function parseChats(raw: string | undefined): Record<string, string>[] {
  try {
    const parsed: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(parsed) ? (parsed as Record<string, string>[]) : [];
  } catch {
    return [];
  }
}

/**
 * Builds the status from option values. `secretsSet` tells which write-only options hold a value
 * (the payment switch depends on EpayKey being set without revealing it).
 */
export function buildPublicStatus(
  o: Record<string, string>,
  meta: { version: string; startTime: number; secretsSet: ReadonlySet<string> },
): PublicStatus {
  return {
    version: meta.version,
    start_time: meta.startTime,
    system_name: o.SystemName ?? '',
    logo: o.Logo ?? '',
    footer_html: o.Footer ?? '',
    quota_per_unit: num(o.QuotaPerUnit, 500000),
    display_in_currency: flag(o.DisplayInCurrencyEnabled),
    display_token_stat: flag(o.DisplayTokenStatEnabled),
    enable_drawing: flag(o.DrawingEnabled),
    enable_task: flag(o.TaskEnabled),
    enable_data_export: flag(o.DataExportEnabled),
    chats: parseChats(o.Chats),
    data_export_default_time: o.DataExportDefaultTime ?? 'hour',
    default_collapse_sidebar: flag(o.DefaultCollapseSidebar),
    mj_notify_enabled: flag(o.MjNotifyEnabled),
    chat_link: o.ChatLink ?? '',
    chat_link2: o.ChatLink2 ?? '',
    email_verification: flag(o.EmailVerificationEnabled),
    turnstile_check: flag(o.TurnstileCheckEnabled),
    turnstile_site_key: o.TurnstileSiteKey ?? '',
    github_oauth: flag(o.GitHubOAuthEnabled),
    github_client_id: o.GitHubClientId ?? '',
    wechat_login: flag(o.WeChatAuthEnabled),
    wechat_qrcode: o.WeChatAccountQRCodeImageURL ?? '',
    telegram_oauth: flag(o.TelegramOAuthEnabled),
    telegram_bot_name: o.TelegramBotName ?? '',
    password_login_enabled: flag(o.PasswordLoginEnabled),
    password_register_enabled: flag(o.PasswordRegisterEnabled),
    register_enabled: flag(o.RegisterEnabled),
    server_address: o.ServerAddress ?? '',
    top_up_link: o.TopUpLink ?? '',
    min_topup: num(o.MinTopUp, 1),
    price: num(o.Price, 7.3),
    enable_online_topup: Boolean(o.PayAddress && o.EpayId && meta.secretsSet.has('EpayKey')),
  };
}
