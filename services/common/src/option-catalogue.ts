/**
 * Every system option: its default and its kind. Values are stored and sent as text (spec 01
 * section 3); the kind drives validation on save in the users service, and the options cache of
 * every service falls back to these defaults, so a default is written here once and nowhere
 * else. Defaults follow reference-behaviour.md where the spec gives none.
 */
export type OptionKind = 'bool' | 'int' | 'float' | 'json' | 'text' | 'url';

export interface OptionSpec {
  default: string;
  kind: OptionKind;
  /** Never returned by GET /api/option/ (write-only). */
  secret?: boolean;
}

/** A spec whose kind is known to the type checker. */
interface OptionSpecOf<K extends OptionKind> extends OptionSpec {
  kind: K;
}

// Each helper keeps its kind as a literal type, so that the accessors of the options cache can
// accept only the keys of their kind (a bool read of a number option fails to compile).
const bool = (v: boolean): OptionSpecOf<'bool'> => ({ default: String(v), kind: 'bool' });
const int = (v: number): OptionSpecOf<'int'> => ({ default: String(v), kind: 'int' });
const float = (v: number): OptionSpecOf<'float'> => ({ default: String(v), kind: 'float' });
const text = (v = ''): OptionSpecOf<'text'> => ({ default: v, kind: 'text' });
const url = (v = ''): OptionSpecOf<'url'> => ({ default: v, kind: 'url' });
const json = (v: unknown): OptionSpecOf<'json'> => ({ default: JSON.stringify(v), kind: 'json' });
const secret = (): OptionSpecOf<'text'> => ({ default: '', kind: 'text', secret: true });

export const DEFAULT_GROUP_RATIO = { default: 1, vip: 1, svip: 1 };

export const OPTION_CATALOGUE = {
  // Login and registration switches
  PasswordLoginEnabled: bool(true),
  PasswordRegisterEnabled: bool(true),
  EmailVerificationEnabled: bool(false),
  GitHubOAuthEnabled: bool(false),
  WeChatAuthEnabled: bool(false),
  TelegramOAuthEnabled: bool(false),
  TurnstileCheckEnabled: bool(false),
  RegisterEnabled: bool(true),
  EmailDomainRestrictionEnabled: bool(false),
  EmailAliasRestrictionEnabled: bool(false),
  EmailDomainWhitelist: text(
    'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
  ),
  // SMTP
  SMTPServer: text(),
  SMTPPort: int(587),
  SMTPAccount: text(),
  SMTPFrom: text(),
  SMTPToken: secret(),
  SMTPSSLEnabled: bool(false),
  // Server, worker and payment
  ServerAddress: url('http://localhost:3000'),
  WorkerUrl: url(),
  WorkerValidKey: secret(),
  PayAddress: url(),
  CustomCallbackAddress: url(),
  EpayId: text(),
  EpayKey: secret(),
  Price: float(7.3),
  MinTopUp: int(1),
  TopupGroupRatio: json(DEFAULT_GROUP_RATIO),
  // Card payments (new-api's names): Stripe Checkout and Creem
  StripeApiSecret: secret(),
  StripeWebhookSecret: secret(),
  StripePriceId: text(),
  StripeUnitPrice: float(8),
  StripeMinTopUp: int(1),
  StripePromotionCodesEnabled: bool(false),
  CreemApiKey: secret(),
  CreemWebhookSecret: secret(),
  CreemProducts: json([]),
  CreemTestMode: bool(false),
  // Third-party login
  GitHubClientId: text(),
  GitHubClientSecret: secret(),
  WeChatServerAddress: url(),
  WeChatServerToken: secret(),
  WeChatAccountQRCodeImageURL: text(),
  TelegramBotToken: secret(),
  TelegramBotName: text(),
  // Single sign-on (new-api's names): OIDC with discovery, Linux DO, Discord, custom OAuth providers
  'oidc.enabled': bool(false),
  'oidc.display_name': text(),
  'oidc.client_id': text(),
  'oidc.client_secret': secret(),
  'oidc.well_known': url(),
  'oidc.authorization_endpoint': url(),
  'oidc.token_endpoint': url(),
  'oidc.user_info_endpoint': url(),
  LinuxDOOAuthEnabled: bool(false),
  LinuxDOClientId: text(),
  LinuxDOClientSecret: secret(),
  LinuxDOMinimumTrustLevel: int(0),
  'discord.enabled': bool(false),
  'discord.client_id': text(),
  'discord.client_secret': secret(),
  /** The admins' custom OAuth providers (/api/custom-oauth-provider), secrets included; ids are never reused. */
  CustomOAuthProviders: { ...json({ next_id: 1, providers: [] }), secret: true },
  TurnstileSiteKey: text(),
  TurnstileSecretKey: secret(),
  // Content
  Notice: text(),
  SystemName: text('AI Gateway'),
  Logo: text(),
  Footer: text(),
  About: text(),
  HomePageContent: text(),
  // General
  TopUpLink: text(),
  ChatLink: text(),
  ChatLink2: text(),
  QuotaPerUnit: float(500000),
  RetryTimes: int(0),
  DisplayInCurrencyEnabled: bool(true),
  DisplayTokenStatEnabled: bool(true),
  DefaultCollapseSidebar: bool(false),
  // Drawing and tasks
  DrawingEnabled: bool(false),
  TaskEnabled: bool(false),
  MjNotifyEnabled: bool(false),
  MjAccountFilterEnabled: bool(false),
  MjForwardUrlEnabled: bool(true),
  MjModeClearEnabled: bool(false),
  MjActionCheckSuccessEnabled: bool(true),
  // Sensitive words
  CheckSensitiveEnabled: bool(false),
  CheckSensitiveOnPromptEnabled: bool(false),
  SensitiveWords: text(),
  // Logs and dashboard
  LogConsumeEnabled: bool(true),
  DataExportEnabled: bool(true),
  DataExportInterval: int(5),
  DataExportDefaultTime: text('hour'),
  // Days to keep each class of logs (logs service cleanup; 0 keeps them forever)
  LogConsumeRetentionDays: int(0),
  LogErrorRetentionDays: int(0),
  LogSystemRetentionDays: int(0),
  // Days to keep finished drawing and async task records (tasks service; 0 keeps them forever)
  TaskRetentionDays: int(0),
  // Monitoring
  ChannelDisableThreshold: float(5),
  QuotaRemindThreshold: int(1000),
  // Admin alerts: a webhook told when a channel is auto-disabled (new-api's webhook body, signed
  // with the secret in X-Webhook-Signature when one is set).
  AdminWebhookUrl: url(),
  AdminWebhookSecret: secret(),
  AutomaticDisableChannelEnabled: bool(false),
  AutomaticEnableChannelEnabled: bool(false),
  // Failover rules (new-api's formats, services/common/src/failover-rules.ts): keywords one per
  // line; status codes and ranges comma-separated. The retry default is the old fixed rule.
  AutomaticDisableKeywords: text(
    [
      'Your credit balance is too low',
      'This organization has been disabled.',
      'You exceeded your current quota',
      'Permission denied',
      'The security token included in the request is invalid',
      'Operation not allowed',
      'Your account is not authorized',
      'Incorrect API key',
      'Invalid API key',
      'API key not valid',
      'invalid_api_key',
      'API key expired',
      'account_deactivated',
      'has been deactivated',
      'insufficient_quota',
      'billing_not_active',
      'permission_denied',
      'does not have access',
      'signature we calculated does not match',
      '已欠费',
      '余额不足',
    ].join('\n'),
  ),
  AutomaticDisableStatusCodes: text('401'),
  AutomaticRetryStatusCodes: text('100-199,300-399,401-407,409-499,500-503,505-523,525-599'),
  // Model request limits per user (new-api's names and defaults; the relay enforces them in Redis):
  // within DurationMinutes, at most Count requests (failures included, 0 = no limit) and
  // SuccessCount successful ones; Group: {"group": [count, successCount]}.
  ModelRequestRateLimitEnabled: bool(false),
  ModelRequestRateLimitDurationMinutes: int(1),
  ModelRequestRateLimitCount: int(0),
  ModelRequestRateLimitSuccessCount: int(1000),
  ModelRequestRateLimitGroup: json({}),
  // Quota
  QuotaForNewUser: int(0),
  PreConsumedQuota: int(500),
  QuotaForInviter: int(0),
  QuotaForInvitee: int(0),
  // Daily check-in (new-api's checkin_setting; rewards in quota units, random in [min, max])
  'checkin_setting.enabled': bool(false),
  'checkin_setting.min_quota': int(1000),
  'checkin_setting.max_quota': int(10000),
  // Passkeys (new-api's passkey setting): relying party id and origins default to ServerAddress's
  // host and origin; origins is a comma-separated list; user_verification required|preferred|discouraged.
  'passkey.enabled': bool(false),
  'passkey.rp_display_name': text(),
  'passkey.rp_id': text(),
  'passkey.origins': text(),
  'passkey.allow_insecure_origin': bool(false),
  'passkey.user_verification': text('preferred'),
  'passkey.attachment_preference': text(),
  // Dashboard panels (new-api's console_setting): JSON arrays checked on save by the gateway
  // (services/gateway/src/domain/console-panels.ts), each with its switch.
  'console_setting.announcements': text(),
  'console_setting.api_info': text(),
  'console_setting.faq': text(),
  'console_setting.uptime_kuma_groups': text(),
  'console_setting.announcements_enabled': bool(true),
  'console_setting.api_info_enabled': bool(true),
  'console_setting.faq_enabled': bool(true),
  'console_setting.uptime_kuma_enabled': bool(true),
  // The operator's time zone (IANA name, e.g. Asia/Shanghai) for calendar days such as the
  // check-in day; empty: the server's own time zone (new-api's behaviour).
  TimeZone: text(),
  // Ratios (JSON text); model ratios and prices are seeded by the billing service's pricing defaults
  ModelPrice: json({}),
  ModelRatio: json({}),
  CompletionRatio: json({}),
  // Token-kind ratios (overrides only; the billing service's family rules price other models):
  // cache reads, cache writes, audio and image input relative to text prompt tokens, audio
  // output relative to audio input. On the console's ratio screen (issue 24) and through
  // /api/option/ (ADR 0005).
  CacheRatio: json({}),
  CacheCreationRatio: json({}),
  // new-api's name for cache writes (5 minutes; an hour costs 1.6 times that); wins over CacheCreationRatio.
  CreateCacheRatio: json({}),
  AudioRatio: json({}),
  AudioCompletionRatio: json({}),
  ImageRatio: json({}),
  // Long-context prices by prompt size (this platform's name; new-api has an expression for it):
  // {"model": [{"above_prompt_tokens": 200000, "model_ratio": 6, "completion_ratio": 7.5}]},
  // optional cache_ratio and create_cache_ratio; services/relay/src/domain/pricing.ts.
  ModelPriceTiers: json({}),
  GroupRatio: json(DEFAULT_GROUP_RATIO),
  // Channel affinity (new-api's channel_affinity_setting): one session's requests (a prompt cache
  // key, Claude Code's metadata.user_id, Codex's session) stick to one channel while it serves;
  // services/relay/src/domain/channel-affinity.ts. Rules: new-api's JSON list; empty: the defaults.
  'channel_affinity_setting.enabled': bool(true),
  'channel_affinity_setting.switch_on_success': bool(true),
  'channel_affinity_setting.keep_on_channel_disabled': bool(false),
  'channel_affinity_setting.default_ttl_seconds': int(3600),
  'channel_affinity_setting.rules': json([]),
  // Models with no ModelPrice or ModelRatio entry: refused (400, naming the model) unless this is
  // on; then served at DefaultModelRatio (completion ratio from CompletionRatio, else 1).
  UnpricedModelsEnabled: bool(false),
  DefaultModelRatio: float(1),
  UserUsableGroups: json({ default: '默认分组', vip: 'vip分组' }),
  // Groups as new-api has them (services/common/src/groups.ts): what a user of one group pays in
  // another ({"vip": {"default": 0.9}}), extra groups a user group may pick ({"vip": {"+:svip":
  // "desc", "-:default": ""}}), and the ordered groups an `auto` token walks.
  GroupGroupRatio: json({ vip: { edit_this: 0.9 } }),
  'group_ratio_setting.group_special_usable_group': json({}),
  AutoGroups: json(['default']),
  DefaultUseAutoGroup: bool(false),
  // Chats
  Chats: json([
    { 'ChatGPT Next Web': 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
    {
      'Lobe Chat':
        'https://chat-preview.lobehub.com/?settings={"keyVaults":{"openai":{"apiKey":"{key}","baseURL":"{address}/v1"}}}',
    },
  ]),
} satisfies Record<string, OptionSpec>;

type Catalogue = typeof OPTION_CATALOGUE;

export type OptionKey = keyof Catalogue;

/** The option keys whose kind is one of `K`. */
export type OptionKeyOfKind<K extends OptionKind> = {
  [P in OptionKey]: Catalogue[P]['kind'] extends K ? P : never;
}[OptionKey];

export type BoolOptionKey = OptionKeyOfKind<'bool'>;
export type NumberOptionKey = OptionKeyOfKind<'int' | 'float'>;
export type JsonOptionKey = OptionKeyOfKind<'json'>;
export type TextOptionKey = OptionKeyOfKind<'text' | 'url'>;

/** Whether a key is a known option. */
export const isOptionKey = (key: string): key is OptionKey => Object.hasOwn(OPTION_CATALOGUE, key);

/** Every option with its default value. */
export function defaultOptions(): Record<OptionKey, string> {
  return Object.fromEntries(Object.entries(OPTION_CATALOGUE).map(([k, s]) => [k, s.default])) as Record<
    OptionKey,
    string
  >;
}

/**
 * Typed reads of option values, each falling back to the catalogue's default when no value is held
 * (or, for numbers and JSON, when the held text does not parse).
 */
export interface OptionAccessors {
  /** The stored text, or undefined when none is held (no default applied). */
  get(key: OptionKey): string | undefined;
  text(key: TextOptionKey): string;
  bool(key: BoolOptionKey): boolean;
  /** `fallback` overrides the catalogue's default; pass it only where a caller needs another one. */
  number(key: NumberOptionKey, fallback?: number): number;
  /** `fallback` overrides the catalogue's default; pass it only where a caller needs another one. */
  json<T>(key: JsonOptionKey, fallback?: T): T;
}

/**
 * The accessors over a lookup of stored values (the options cache's map, or a plain record in
 * tests). Parsed JSON is kept per key until its text changes, so a caller must not mutate it.
 */
export function optionAccessors(lookup: (key: OptionKey) => string | undefined): OptionAccessors {
  const jsonCache = new Map<string, { raw: string; parsed: unknown }>();
  const parseJson = (key: OptionKey, raw: string): unknown => {
    const hit = jsonCache.get(key);
    if (hit?.raw === raw) return hit.parsed;
    const parsed: unknown = JSON.parse(raw);
    jsonCache.set(key, { raw, parsed });
    return parsed;
  };
  return {
    get: lookup,
    text: (key) => lookup(key) ?? OPTION_CATALOGUE[key].default,
    bool: (key) => (lookup(key) ?? OPTION_CATALOGUE[key].default) === 'true',
    number: (key, fallback) => {
      const raw = lookup(key);
      const n = Number(raw);
      if (raw !== undefined && raw !== '' && Number.isFinite(n)) return n;
      return fallback ?? Number(OPTION_CATALOGUE[key].default);
    },
    json<T>(key: JsonOptionKey, fallback?: T): T {
      const raw = lookup(key);
      if (raw !== undefined) {
        try {
          return parseJson(key, raw) as T;
        } catch {
          // A held value that does not parse falls through to the default, as if none were held.
        }
      }
      if (fallback !== undefined) return fallback;
      // Parsed afresh on every call, so a caller that mutates the result cannot change the default.
      return JSON.parse(OPTION_CATALOGUE[key].default) as T;
    },
  };
}
