/**
 * Every system option: its default and its kind. Values are stored and sent as text (spec 01
 * section 3); the kind drives validation on save. Defaults follow reference-behaviour.md where the
 * spec gives none.
 */
export type OptionKind = 'bool' | 'int' | 'float' | 'json' | 'text' | 'url';

export interface OptionSpec {
  default: string;
  kind: OptionKind;
  /** Never returned by GET /api/option/ (write-only). */
  secret?: boolean;
}

const bool = (v: boolean): OptionSpec => ({ default: String(v), kind: 'bool' });
const int = (v: number): OptionSpec => ({ default: String(v), kind: 'int' });
const float = (v: number): OptionSpec => ({ default: String(v), kind: 'float' });
const text = (v = ''): OptionSpec => ({ default: v, kind: 'text' });
const url = (v = ''): OptionSpec => ({ default: v, kind: 'url' });
const json = (v: unknown): OptionSpec => ({ default: JSON.stringify(v), kind: 'json' });
const secret = (): OptionSpec => ({ default: '', kind: 'text', secret: true });

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
  // Third-party login
  GitHubClientId: text(),
  GitHubClientSecret: secret(),
  WeChatServerAddress: url(),
  WeChatServerToken: secret(),
  WeChatAccountQRCodeImageURL: text(),
  TelegramBotToken: secret(),
  TelegramBotName: text(),
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
  // Monitoring
  ChannelDisableThreshold: float(5),
  QuotaRemindThreshold: int(1000),
  AutomaticDisableChannelEnabled: bool(false),
  AutomaticEnableChannelEnabled: bool(false),
  // Quota
  QuotaForNewUser: int(0),
  PreConsumedQuota: int(500),
  QuotaForInviter: int(0),
  QuotaForInvitee: int(0),
  // Ratios (JSON text); model ratios and prices are seeded by the billing service's pricing defaults
  ModelPrice: json({}),
  ModelRatio: json({}),
  CompletionRatio: json({}),
  // Token-kind ratios (overrides only; the billing service's family rules price other models):
  // cache reads, cache writes, audio and image input relative to text prompt tokens, audio
  // output relative to audio input. Not on the console's ratio screen (spec); set through
  // /api/option/ (ADR 0005).
  CacheRatio: json({}),
  CacheCreationRatio: json({}),
  AudioRatio: json({}),
  AudioCompletionRatio: json({}),
  ImageRatio: json({}),
  GroupRatio: json(DEFAULT_GROUP_RATIO),
  // Models with no ModelPrice or ModelRatio entry: refused (400, naming the model) unless this is
  // on; then served at DefaultModelRatio (completion ratio from CompletionRatio, else 1).
  UnpricedModelsEnabled: bool(false),
  DefaultModelRatio: float(1),
  UserUsableGroups: json({ default: '默认分组', vip: 'vip分组' }),
  // Chats
  Chats: json([
    { 'ChatGPT Next Web': 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
    {
      'Lobe Chat':
        'https://chat-preview.lobehub.com/?settings={"keyVaults":{"openai":{"apiKey":"{key}","baseURL":"{address}/v1"}}}',
    },
  ]),
} satisfies Record<string, OptionSpec>;

export type OptionKey = keyof typeof OPTION_CATALOGUE;

/** Whether a key is a known option. */
export const isOptionKey = (key: string): key is OptionKey => Object.hasOwn(OPTION_CATALOGUE, key);

/** Every option with its default value. */
export function defaultOptions(): Record<OptionKey, string> {
  return Object.fromEntries(Object.entries(OPTION_CATALOGUE).map(([k, s]) => [k, s.default])) as Record<
    OptionKey,
    string
  >;
}
