/**
 * The settings of the operation, system and other tabs (spec 01 sections 2 and 3), as data: each
 * section lists its option keys with a label and an input kind. Labels carry both languages.
 */
import type { LocaleKey } from '../../locale/zh-CN.ts';
import { CONSOLE_PANELS_SECTION } from './console-panels-section.ts';
export type FieldKind = 'switch' | 'text' | 'textarea' | 'number' | 'json' | 'select' | 'secret';

export type Label = LocaleKey;

export interface FieldSpec {
  key: string;
  label: Label;
  kind: FieldKind;
  placeholder?: Label;
  /** Select choices (value, label). */
  choices?: readonly (readonly [string, Label])[];
  /** Smallest number allowed. */
  min?: number;
  /** Shown under the field. */
  extra?: Label;
}

export interface SectionSpec {
  id: string;
  title: Label;
  fields: readonly FieldSpec[];
  /** Switches save on toggle instead of with the section's button. */
  immediate?: boolean;
  /** Extra content rendered by the page (log cleanup, model-ratio reset). */
  extra?: 'log-cleanup' | 'reset-model-ratio' | 'custom-oauth';
  /** Keys that must be set before this section saves (payment needs the server address). */
  requires?: { key: string; message: Label };
  /** Failure text of a one-key section (e.g. 公告更新失败). */
  failure?: Label;
}

const sw = (key: string, label: Label, extra?: Label): FieldSpec => ({
  key,
  label,
  kind: 'switch',
  extra,
});
const text = (key: string, label: Label, placeholder?: Label): FieldSpec => ({
  key,
  label,
  kind: 'text',
  placeholder,
});
const num = (key: string, label: Label, min = 0, extra?: Label): FieldSpec => ({
  key,
  label,
  kind: 'number',
  min,
  extra,
});
const area = (key: string, label: Label, placeholder?: Label): FieldSpec => ({
  key,
  label,
  kind: 'textarea',
  placeholder,
});
const json = (key: string, label: Label, placeholder?: Label): FieldSpec => ({
  key,
  label,
  kind: 'json',
  placeholder,
});
const secret = (key: string, label: Label): FieldSpec => ({
  key,
  label,
  kind: 'secret',
  placeholder: 'opt.secretsAreNeverSentBack',
});

export const OPERATION_SECTIONS: readonly SectionSpec[] = [
  {
    id: 'general',
    title: 'opt.general',
    fields: [
      text('TopUpLink', 'opt.topUpLink', 'opt.eGAShopLink'),
      text('ChatLink', 'opt.defaultChatLink'),
      text('ChatLink2', 'opt.chatLink2Deprecated'),
      num('QuotaPerUnit', 'opt.quotaPerDollar', 1, 'opt.quotaUnitsPerDollar'),
      num('RetryTimes', 'opt.retriesOnFailure'),
      sw('DisplayInCurrencyEnabled', 'opt.showQuotaAsCurrency'),
      sw('DisplayTokenStatEnabled', 'opt.billingApisShowTokenQuota'),
      sw('DefaultCollapseSidebar', 'opt.collapseTheSideMenuBy'),
    ],
  },
  {
    id: 'drawing',
    title: 'opt.drawing',
    fields: [
      sw('DrawingEnabled', 'opt.enableDrawing'),
      sw('TaskEnabled', 'opt.enableAsyncTasks'),
      sw('MjNotifyEnabled', 'opt.allowCallbacksRevealsTheServer'),
      sw('MjAccountFilterEnabled', 'opt.allowTheAccountfilterParameter'),
      sw('MjForwardUrlEnabled', 'opt.replaceUpstreamImageUrlsWith'),
      sw('MjModeClearEnabled', 'opt.stripFastRelaxAndTurbo'),
      sw('MjActionCheckSuccessEnabled', 'opt.actionsNeedAFinishedImage'),
    ],
  },
  {
    id: 'sensitive',
    title: 'opt.sensitiveWords',
    fields: [
      sw('CheckSensitiveEnabled', 'opt.enableSensitiveWordFiltering'),
      sw('CheckSensitiveOnPromptEnabled', 'opt.checkPrompts'),
      area('SensitiveWords', 'opt.sensitiveWords2', 'opt.oneWordPerLine'),
    ],
  },
  {
    id: 'logs',
    title: 'opt.logs',
    fields: [
      sw('LogConsumeEnabled', 'opt.logQuotaConsumption'),
      num('LogConsumeRetentionDays', 'opt.consumptionLogRetentionDays', 0, 'opt.logRetentionHint'),
      num('LogErrorRetentionDays', 'opt.errorLogRetentionDays', 0, 'opt.logRetentionHint'),
      num('LogSystemRetentionDays', 'opt.systemLogRetentionDays', 0, 'opt.logRetentionHint'),
      num('TaskRetentionDays', 'opt.taskRetentionDays', 0, 'opt.taskRetentionHint'),
    ],
    extra: 'log-cleanup',
  },
  {
    id: 'dashboard',
    title: 'opt.dataDashboard',
    fields: [
      sw('DataExportEnabled', 'opt.enableTheDataDashboardExperimental'),
      num('DataExportInterval', 'opt.dashboardUpdateIntervalMinutes', 1, 'opt.shortIntervalsLoadTheDatabase'),
      {
        key: 'DataExportDefaultTime',
        label: 'opt.defaultDashboardGranularity',
        kind: 'select',
        choices: [
          ['hour', 'opt.hour'],
          ['day', 'opt.day'],
          ['week', 'opt.week'],
        ],
      },
    ],
  },
  {
    id: 'monitor',
    title: 'opt.monitoring',
    fields: [
      num('ChannelDisableThreshold', 'opt.longestResponseTimeS', 0, 'opt.channelsSlowerThanThisIn'),
      num('QuotaRemindThreshold', 'opt.quotaReminderThreshold', 0, 'opt.usersBelowThisQuotaGet'),
      sw('AutomaticDisableChannelEnabled', 'opt.disableChannelsOnFailure'),
      sw('AutomaticEnableChannelEnabled', 'opt.enableChannelsOnSuccess'),
      // Failover rules (new-api's names and formats), checked on save by the server.
      {
        key: 'AutomaticDisableKeywords',
        label: 'opt.automaticDisableKeywords',
        kind: 'textarea',
        extra: 'opt.automaticDisableKeywordsExtra',
      },
      {
        key: 'AutomaticDisableStatusCodes',
        label: 'opt.automaticDisableStatusCodes',
        kind: 'text',
        extra: 'opt.statusCodesExtra',
      },
      {
        key: 'AutomaticRetryStatusCodes',
        label: 'opt.automaticRetryStatusCodes',
        kind: 'text',
        extra: 'opt.statusCodesExtra',
      },
    ],
  },
  {
    // new-api's model request limits per user; the relay enforces them across replicas (Redis).
    id: 'rate-limit',
    title: 'opt.rateLimit',
    fields: [
      sw('ModelRequestRateLimitEnabled', 'opt.rateLimitEnabled'),
      num('ModelRequestRateLimitDurationMinutes', 'opt.rateLimitMinutes', 1),
      num('ModelRequestRateLimitCount', 'opt.rateLimitCount', 0, 'opt.rateLimitCountExtra'),
      num('ModelRequestRateLimitSuccessCount', 'opt.rateLimitSuccessCount', 1),
      {
        key: 'ModelRequestRateLimitGroup',
        label: 'opt.rateLimitGroup',
        kind: 'json',
        placeholder: 'opt.rateLimitGroupPlaceholder',
        extra: 'opt.rateLimitGroupExtra',
      },
    ],
  },
  {
    id: 'quota',
    title: 'opt.quota',
    fields: [
      num('QuotaForNewUser', 'opt.quotaForNewUsers'),
      num('PreConsumedQuota', 'opt.preConsumedQuota', 0, 'opt.settledAfterTheRequest'),
      num('QuotaForInviter', 'opt.rewardForTheInviter'),
      num('QuotaForInvitee', 'opt.rewardForTheInvitee'),
    ],
  },
  {
    // new-api's checkin_setting, and the operator's time zone that decides the check-in day.
    id: 'checkin',
    title: 'opt.checkin',
    fields: [
      sw('checkin_setting.enabled', 'opt.checkinEnabled'),
      num('checkin_setting.min_quota', 'opt.checkinMinQuota'),
      num('checkin_setting.max_quota', 'opt.checkinMaxQuota'),
      {
        key: 'TimeZone',
        label: 'opt.timeZone',
        kind: 'text',
        placeholder: 'opt.timeZonePlaceholder',
        extra: 'opt.timeZoneExtra',
      },
    ],
  },
  {
    id: 'chats',
    title: 'opt.tokenChatLinks',
    fields: [json('Chats', 'opt.chatLinks', 'opt.aJsonListOfName')],
  },
  {
    id: 'ratio',
    title: 'opt.ratios',
    fields: [
      json('ModelPrice', 'opt.fixedModelPrices', 'opt.dollarsPerCallWinsOver'),
      json('ModelRatio', 'opt.modelRatios', 'opt.jsonModelNameRatio'),
      json('CompletionRatio', 'opt.completionRatios'),
      // Token-kind ratios (new-api's names; relative to the model's text prompt price).
      json('CacheRatio', 'opt.cacheRatios', 'opt.jsonModelNameRatio'),
      json('CreateCacheRatio', 'opt.createCacheRatios', 'opt.jsonModelNameRatio'),
      json('AudioRatio', 'opt.audioRatios', 'opt.jsonModelNameRatio'),
      json('AudioCompletionRatio', 'opt.audioCompletionRatios', 'opt.jsonModelNameRatio'),
      json('ImageRatio', 'opt.imageRatios', 'opt.jsonModelNameRatio'),
      // Long-context prices by prompt size (services/relay/src/domain/pricing.ts).
      json('ModelPriceTiers', 'opt.modelPriceTiers', 'opt.modelPriceTiersHint'),
      json('GroupRatio', 'opt.groupRatios', 'opt.jsonGroupNameRatio'),
      json('UserUsableGroups', 'opt.groupsUsersMayChoose', 'opt.jsonGroupNameLabel'),
      // Groups as new-api has them (services/common/src/groups.ts).
      json('GroupGroupRatio', 'opt.groupGroupRatios', 'opt.groupGroupRatiosHint'),
      json('group_ratio_setting.group_special_usable_group', 'opt.specialUsableGroups', 'opt.specialUsableGroupsHint'),
      json('AutoGroups', 'opt.autoGroups', 'opt.autoGroupsHint'),
      sw('DefaultUseAutoGroup', 'opt.defaultUseAutoGroup', 'opt.defaultUseAutoGroupHint'),
      sw('UnpricedModelsEnabled', 'opt.serveUnpricedModels', 'opt.unpricedModelsHint'),
      num('DefaultModelRatio', 'opt.defaultModelRatio'),
    ],
    extra: 'reset-model-ratio',
  },
];

export const SYSTEM_SECTIONS: readonly SectionSpec[] = [
  {
    id: 'server',
    title: 'opt.general',
    fields: [text('ServerAddress', 'opt.serverAddress', 'opt.eGHttpsYourdomainCom')],
  },
  {
    id: 'worker',
    title: 'opt.workerProxy',
    fields: [text('WorkerUrl', 'opt.workerUrl', 'opt.eGHttpsWorkerExample'), secret('WorkerValidKey', 'opt.workerKey')],
  },
  {
    id: 'payment',
    title: 'opt.payment',
    requires: { key: 'ServerAddress', message: 'opt.fillInTheServerAddress' },
    fields: [
      text('PayAddress', 'opt.paymentGatewayAddress', 'opt.eGHttpsPayExample'),
      text('EpayId', 'opt.merchantId'),
      secret('EpayKey', 'opt.merchantKey'),
      text('CustomCallbackAddress', 'opt.callbackAddress', 'opt.emptyTheServerAddress'),
      num('Price', 'opt.priceYuanPerDollar', 0),
      num('MinTopUp', 'opt.minimumTopUpDollars', 1),
      json('TopupGroupRatio', 'opt.topUpGroupRatios', 'opt.jsonGroupNameRatio'),
    ],
  },
  {
    id: 'card-payments',
    title: 'opt.cardPayments',
    requires: { key: 'ServerAddress', message: 'opt.fillInTheServerAddress' },
    fields: [
      secret('StripeApiSecret', 'opt.stripeApiSecret'),
      secret('StripeWebhookSecret', 'opt.stripeWebhookSecret'),
      text('StripePriceId', 'opt.stripePriceId', 'opt.stripePriceIdPlaceholder'),
      num('StripeUnitPrice', 'opt.stripeUnitPrice', 0),
      num('StripeMinTopUp', 'opt.stripeMinTopUp', 1),
      sw('StripePromotionCodesEnabled', 'opt.stripePromotionCodes'),
      secret('CreemApiKey', 'opt.creemApiKey'),
      secret('CreemWebhookSecret', 'opt.creemWebhookSecret'),
      json('CreemProducts', 'opt.creemProducts', 'opt.creemProductsPlaceholder'),
      sw('CreemTestMode', 'opt.creemTestMode'),
    ],
  },
  {
    id: 'login',
    title: 'opt.loginAndRegistration',
    immediate: true,
    fields: [
      sw('PasswordLoginEnabled', 'opt.allowPasswordLogin'),
      sw('PasswordRegisterEnabled', 'opt.allowPasswordRegistration'),
      sw('EmailVerificationEnabled', 'opt.requireEmailVerificationOnRegistration'),
      sw('GitHubOAuthEnabled', 'opt.allowGithubLoginAndRegistration'),
      sw('WeChatAuthEnabled', 'opt.allowWechatLoginAndRegistration'),
      sw('TelegramOAuthEnabled', 'opt.allowTelegramLogin'),
      sw('oidc.enabled', 'opt.allowOidcLogin'),
      sw('LinuxDOOAuthEnabled', 'opt.allowLinuxdoLogin'),
      sw('discord.enabled', 'opt.allowDiscordLogin'),
      sw('RegisterEnabled', 'opt.allowNewUsersToRegister'),
      sw('TurnstileCheckEnabled', 'opt.turnstileCheck'),
    ],
  },
  {
    id: 'email-domain',
    title: 'opt.emailDomainWhitelist',
    fields: [
      sw('EmailDomainRestrictionEnabled', 'opt.restrictEmailDomains'),
      sw('EmailAliasRestrictionEnabled', 'opt.refuseEmailAliasesEG'),
      text('EmailDomainWhitelist', 'opt.allowedDomains', 'opt.commaSeparatedEGGmail'),
    ],
  },
  {
    id: 'smtp',
    title: 'opt.smtp',
    fields: [
      text('SMTPServer', 'opt.smtpServer', 'opt.eGSmtpQqCom'),
      num('SMTPPort', 'opt.smtpPort', 1, 'opt.default587Port465Forces'),
      text('SMTPAccount', 'opt.smtpAccount'),
      text('SMTPFrom', 'opt.senderAddress'),
      secret('SMTPToken', 'opt.smtpPasswordOrToken'),
      sw('SMTPSSLEnabled', 'opt.useSslAlwaysOnFor'),
    ],
  },
  {
    id: 'github',
    title: 'opt.githubOauthApp',
    fields: [text('GitHubClientId', 'opt.githubClientId'), secret('GitHubClientSecret', 'opt.githubClientSecret')],
  },
  {
    id: 'wechat',
    title: 'opt.wechatServer',
    fields: [
      text('WeChatServerAddress', 'opt.wechatServerAddress', 'opt.eGHttpsWechatExample'),
      secret('WeChatServerToken', 'opt.wechatServerToken'),
      text('WeChatAccountQRCodeImageURL', 'opt.qrCodeImageUrl'),
    ],
  },
  {
    id: 'telegram',
    title: 'opt.telegramLogin',
    fields: [secret('TelegramBotToken', 'opt.telegramBotToken'), text('TelegramBotName', 'opt.telegramBotName')],
  },
  // Single sign-on (new-api's option names); the redirect URI to register is <ServerAddress>/oauth/<name>.
  {
    id: 'oidc',
    title: 'opt.oidc',
    fields: [
      text('oidc.display_name', 'opt.oidcDisplayName', 'opt.oidcDisplayNamePlaceholder'),
      text('oidc.well_known', 'opt.oidcWellKnown', 'opt.oidcWellKnownPlaceholder'),
      text('oidc.client_id', 'opt.oidcClientId'),
      secret('oidc.client_secret', 'opt.oidcClientSecret'),
      text('oidc.authorization_endpoint', 'opt.oidcAuthorizationEndpoint', 'opt.oidcFromDiscovery'),
      text('oidc.token_endpoint', 'opt.oidcTokenEndpoint', 'opt.oidcFromDiscovery'),
      text('oidc.user_info_endpoint', 'opt.oidcUserInfoEndpoint', 'opt.oidcFromDiscovery'),
    ],
  },
  {
    id: 'linuxdo',
    title: 'opt.linuxdo',
    fields: [
      text('LinuxDOClientId', 'opt.linuxdoClientId'),
      secret('LinuxDOClientSecret', 'opt.linuxdoClientSecret'),
      num('LinuxDOMinimumTrustLevel', 'opt.linuxdoMinimumTrustLevel', 0, 'opt.linuxdoMinimumTrustLevelExtra'),
    ],
  },
  {
    id: 'discord',
    title: 'opt.discord',
    fields: [
      text('discord.client_id', 'opt.discordClientId'),
      secret('discord.client_secret', 'opt.discordClientSecret'),
    ],
  },
  { id: 'custom-oauth', title: 'opt.customOauth', fields: [], extra: 'custom-oauth' },
  {
    id: 'turnstile',
    title: 'opt.turnstile',
    fields: [text('TurnstileSiteKey', 'opt.turnstileSiteKey'), secret('TurnstileSecretKey', 'opt.turnstileSecretKey')],
  },
];

const one = (id: string, field: FieldSpec, title: Label, failure: Label): SectionSpec => ({
  id,
  title,
  fields: [field],
  failure,
});

export const OTHER_SECTIONS: readonly SectionSpec[] = [
  one(
    'notice',
    area('Notice', 'opt.notice2', 'opt.markdownAndHtmlAllowed'),
    'opt.notice',
    'opt.failedToUpdateTheNotice',
  ),
  one('system-name', text('SystemName', 'opt.systemName2'), 'opt.systemName', 'opt.failedToUpdateTheSystem'),
  one('logo', text('Logo', 'opt.logoUrl', 'opt.imageUrl'), 'opt.logo', 'opt.failedToUpdateTheLogo'),
  one(
    'home',
    area('HomePageContent', 'opt.homePageContent', 'opt.markdownHtmlOrAUrl'),
    'opt.homePage',
    'opt.failedToUpdateTheHome',
  ),
  one('about', area('About', 'opt.about2', 'opt.markdownAndHtmlAllowed2'), 'opt.about', 'opt.failedToUpdateTheAbout'),
  one(
    'footer',
    text('Footer', 'opt.footer2', 'opt.htmlEmptyForTheDefault'),
    'opt.footer',
    'opt.failedToUpdateTheFooter',
  ),
  CONSOLE_PANELS_SECTION,
];
