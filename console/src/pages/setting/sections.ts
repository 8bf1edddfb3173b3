/**
 * The settings of the operation, system and other tabs (spec 01 sections 2 and 3), as data: each
 * section lists its option keys with a label and an input kind. Labels carry both languages.
 */
export type FieldKind = 'switch' | 'text' | 'textarea' | 'number' | 'json' | 'select' | 'secret';

export type Label = readonly [zh: string, en: string];

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
  extra?: 'log-cleanup' | 'reset-model-ratio';
  /** Keys that must be set before this section saves (payment needs the server address). */
  requires?: { key: string; message: Label };
  /** Failure text of a one-key section (e.g. 公告更新失败). */
  failure?: Label;
}

const sw = (key: string, zh: string, en: string, extra?: Label): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'switch',
  extra,
});
const text = (key: string, zh: string, en: string, placeholder?: Label): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'text',
  placeholder,
});
const num = (key: string, zh: string, en: string, min = 0, extra?: Label): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'number',
  min,
  extra,
});
const area = (key: string, zh: string, en: string, placeholder?: Label): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'textarea',
  placeholder,
});
const json = (key: string, zh: string, en: string, placeholder?: Label): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'json',
  placeholder,
});
const secret = (key: string, zh: string, en: string): FieldSpec => ({
  key,
  label: [zh, en],
  kind: 'secret',
  placeholder: ['敏感信息不会发送到前端显示', 'Secrets are never sent back to the browser'],
});

export const OPERATION_SECTIONS: readonly SectionSpec[] = [
  {
    id: 'general',
    title: ['通用设置', 'General'],
    fields: [
      text('TopUpLink', '充值链接', 'Top-up link', ['例如发卡网站的购买链接', 'e.g. a shop link']),
      text('ChatLink', '默认聊天页面链接', 'Default chat link'),
      text('ChatLink2', '聊天页面 2 链接（已废弃）', 'Chat link 2 (deprecated)'),
      num('QuotaPerUnit', '单位美元额度', 'Quota per dollar', 1, ['一单位货币能兑换的额度', 'Quota units per dollar']),
      num('RetryTimes', '失败重试次数', 'Retries on failure'),
      sw('DisplayInCurrencyEnabled', '以货币形式显示额度', 'Show quota as currency'),
      sw('DisplayTokenStatEnabled', 'Billing 相关 API 显示令牌额度而非用户额度', 'Billing APIs show token quota'),
      sw('DefaultCollapseSidebar', '默认折叠侧边栏', 'Collapse the side menu by default'),
    ],
  },
  {
    id: 'drawing',
    title: ['绘图设置', 'Drawing'],
    fields: [
      sw('DrawingEnabled', '启用绘图功能', 'Enable drawing'),
      sw('TaskEnabled', '启用异步任务', 'Enable async tasks'),
      sw('MjNotifyEnabled', '允许回调（会泄露服务器 IP 地址）', 'Allow callbacks (reveals the server address)'),
      sw('MjAccountFilterEnabled', '允许 AccountFilter 参数', 'Allow the AccountFilter parameter'),
      sw(
        'MjForwardUrlEnabled',
        '开启之后将上游地址替换为服务器地址',
        'Replace upstream image URLs with the server address',
      ),
      sw(
        'MjModeClearEnabled',
        '开启之后会清除用户提示词中的 --fast、--relax 以及 --turbo 参数',
        'Strip --fast, --relax and --turbo',
      ),
      sw('MjActionCheckSuccessEnabled', '检测必须等待绘图成功才能进行放大等操作', 'Actions need a finished image'),
    ],
  },
  {
    id: 'sensitive',
    title: ['屏蔽词过滤设置', 'Sensitive words'],
    fields: [
      sw('CheckSensitiveEnabled', '启用屏蔽词过滤功能', 'Enable sensitive-word filtering'),
      sw('CheckSensitiveOnPromptEnabled', '启用 Prompt 检查', 'Check prompts'),
      area('SensitiveWords', '屏蔽词列表', 'Sensitive words', ['一行一个屏蔽词，不需要符号分割', 'One word per line']),
    ],
  },
  {
    id: 'logs',
    title: ['日志设置', 'Logs'],
    fields: [sw('LogConsumeEnabled', '启用额度消费日志记录', 'Log quota consumption')],
    extra: 'log-cleanup',
  },
  {
    id: 'dashboard',
    title: ['数据看板设置', 'Data dashboard'],
    fields: [
      sw('DataExportEnabled', '启用数据看板（实验性）', 'Enable the data dashboard (experimental)'),
      num('DataExportInterval', '数据看板更新间隔（分钟）', 'Dashboard update interval (minutes)', 1, [
        '设置过短会影响数据库性能',
        'Short intervals load the database',
      ]),
      {
        key: 'DataExportDefaultTime',
        label: ['数据看板默认时间粒度', 'Default dashboard granularity'],
        kind: 'select',
        choices: [
          ['hour', ['小时', 'Hour']],
          ['day', ['天', 'Day']],
          ['week', ['周', 'Week']],
        ],
      },
    ],
  },
  {
    id: 'monitor',
    title: ['监控设置', 'Monitoring'],
    fields: [
      num('ChannelDisableThreshold', '最长响应时间（秒）', 'Longest response time (s)', 0, [
        '渠道测试超过该时间将被自动禁用',
        'Channels slower than this in a test are disabled',
      ]),
      num('QuotaRemindThreshold', '额度提醒阈值', 'Quota reminder threshold', 0, [
        '低于此额度时将发送邮件提醒用户',
        'Users below this quota get a reminder mail',
      ]),
      sw('AutomaticDisableChannelEnabled', '失败时自动禁用渠道', 'Disable channels on failure'),
      sw('AutomaticEnableChannelEnabled', '成功时自动启用渠道', 'Enable channels on success'),
    ],
  },
  {
    id: 'quota',
    title: ['额度设置', 'Quota'],
    fields: [
      num('QuotaForNewUser', '新用户初始额度', 'Quota for new users'),
      num('PreConsumedQuota', '请求预扣费额度', 'Pre-consumed quota', 0, [
        '请求结束后多退少补',
        'Settled after the request',
      ]),
      num('QuotaForInviter', '邀请新用户奖励额度', 'Reward for the inviter'),
      num('QuotaForInvitee', '新用户使用邀请码奖励额度', 'Reward for the invitee'),
    ],
  },
  {
    id: 'chats',
    title: ['令牌聊天设置', 'Token chat links'],
    fields: [
      json('Chats', '聊天配置', 'Chat links', [
        '为一个 JSON 数组，每项为 {"名称":"链接"}，链接中 {key} 与 {address} 会被替换',
        'A JSON list of {"name":"link"}; {key} and {address} are replaced',
      ]),
    ],
  },
  {
    id: 'ratio',
    title: ['倍率设置', 'Ratios'],
    fields: [
      json('ModelPrice', '模型固定价格', 'Fixed model prices', [
        '一次调用消耗多少刀，优先级大于模型倍率',
        'Dollars per call; wins over the ratio',
      ]),
      json('ModelRatio', '模型倍率', 'Model ratios', [
        '为一个 JSON 文本，键为模型名称，值为倍率',
        'JSON: model name -> ratio',
      ]),
      json('CompletionRatio', '模型补全倍率（仅对自定义模型有效）', 'Completion ratios'),
      json('GroupRatio', '分组倍率', 'Group ratios', [
        '为一个 JSON 文本，键为分组名称，值为倍率',
        'JSON: group name -> ratio',
      ]),
      json('UserUsableGroups', '用户可选分组', 'Groups users may choose', [
        '为一个 JSON 文本，键为分组名称，值为描述',
        'JSON: group name -> label',
      ]),
    ],
    extra: 'reset-model-ratio',
  },
];

export const SYSTEM_SECTIONS: readonly SectionSpec[] = [
  {
    id: 'server',
    title: ['通用设置', 'General'],
    fields: [
      text('ServerAddress', '服务器地址', 'Server address', [
        '例如：https://yourdomain.com',
        'e.g. https://yourdomain.com',
      ]),
    ],
  },
  {
    id: 'worker',
    title: ['代理设置', 'Worker proxy'],
    fields: [
      text('WorkerUrl', 'Worker 地址', 'Worker URL', [
        '例如：https://workername.yourdomain.workers.dev',
        'e.g. https://worker.example.dev',
      ]),
      secret('WorkerValidKey', 'Worker 密钥', 'Worker key'),
    ],
  },
  {
    id: 'payment',
    title: ['支付设置', 'Payment'],
    requires: { key: 'ServerAddress', message: ['请先填写服务器地址', 'Fill in the server address first'] },
    fields: [
      text('PayAddress', '支付地址', 'Payment gateway address', [
        '例如：https://yourdomain.com',
        'e.g. https://pay.example.com',
      ]),
      text('EpayId', '易支付商户 ID', 'Merchant id'),
      secret('EpayKey', '易支付商户密钥', 'Merchant key'),
      text('CustomCallbackAddress', '回调地址', 'Callback address', [
        '为空则使用服务器地址',
        'Empty: the server address',
      ]),
      num('Price', '充值价格（x 元/美金）', 'Price (yuan per dollar)', 0),
      num('MinTopUp', '最低充值美元数量', 'Minimum top-up (dollars)', 1),
      json('TopupGroupRatio', '充值分组倍率', 'Top-up group ratios', [
        '为一个 JSON 文本，键为分组名称，值为倍率',
        'JSON: group name -> ratio',
      ]),
    ],
  },
  {
    id: 'login',
    title: ['配置登录注册', 'Login and registration'],
    immediate: true,
    fields: [
      sw('PasswordLoginEnabled', '允许通过密码进行登录', 'Allow password login'),
      sw('PasswordRegisterEnabled', '允许通过密码进行注册', 'Allow password registration'),
      sw('EmailVerificationEnabled', '通过密码注册时需要进行邮箱验证', 'Require email verification on registration'),
      sw('GitHubOAuthEnabled', '允许通过 GitHub 账户登录 & 注册', 'Allow GitHub login and registration'),
      sw('WeChatAuthEnabled', '允许通过微信登录 & 注册', 'Allow WeChat login and registration'),
      sw('TelegramOAuthEnabled', '允许通过 Telegram 进行登录', 'Allow Telegram login'),
      sw(
        'RegisterEnabled',
        '允许新用户注册（此项为否时，新用户将无法以任何方式进行注册）',
        'Allow new users to register (any way)',
      ),
      sw('TurnstileCheckEnabled', '启用 Turnstile 用户校验', 'Turnstile check'),
    ],
  },
  {
    id: 'email-domain',
    title: ['配置邮箱域名白名单', 'Email domain whitelist'],
    fields: [
      sw('EmailDomainRestrictionEnabled', '启用邮箱域名白名单', 'Restrict email domains'),
      sw(
        'EmailAliasRestrictionEnabled',
        '启用邮箱别名限制（例如：ab.cd@gmail.com）',
        'Refuse email aliases (e.g. ab.cd@gmail.com)',
      ),
      text('EmailDomainWhitelist', '允许的邮箱域名', 'Allowed domains', [
        '以英文逗号分隔，例如：gmail.com,qq.com',
        'Comma-separated, e.g. gmail.com,qq.com',
      ]),
    ],
  },
  {
    id: 'smtp',
    title: ['配置 SMTP', 'SMTP'],
    fields: [
      text('SMTPServer', 'SMTP 服务器地址', 'SMTP server', ['例如：smtp.qq.com', 'e.g. smtp.qq.com']),
      num('SMTPPort', 'SMTP 端口', 'SMTP port', 1, [
        '默认 587，465 端口会强制使用 SSL',
        'Default 587; port 465 forces SSL',
      ]),
      text('SMTPAccount', 'SMTP 账户', 'SMTP account'),
      text('SMTPFrom', 'SMTP 发送者邮箱', 'Sender address'),
      secret('SMTPToken', 'SMTP 访问凭证', 'SMTP password or token'),
      sw('SMTPSSLEnabled', '启用 SMTP SSL（465 端口强制开启）', 'Use SSL (always on for port 465)'),
    ],
  },
  {
    id: 'github',
    title: ['配置 GitHub OAuth App', 'GitHub OAuth app'],
    fields: [
      text('GitHubClientId', 'GitHub Client ID', 'GitHub client id'),
      secret('GitHubClientSecret', 'GitHub Client Secret', 'GitHub client secret'),
    ],
  },
  {
    id: 'wechat',
    title: ['配置 WeChat Server', 'WeChat server'],
    fields: [
      text('WeChatServerAddress', 'WeChat Server 服务器地址', 'WeChat server address', [
        '例如：https://yourdomain.com',
        'e.g. https://wechat.example.com',
      ]),
      secret('WeChatServerToken', 'WeChat Server 访问凭证', 'WeChat server token'),
      text('WeChatAccountQRCodeImageURL', '微信公众号二维码图片链接', 'QR code image URL'),
    ],
  },
  {
    id: 'telegram',
    title: ['配置 Telegram 登录', 'Telegram login'],
    fields: [
      secret('TelegramBotToken', 'Telegram Bot Token', 'Telegram bot token'),
      text('TelegramBotName', 'Telegram Bot 名称', 'Telegram bot name'),
    ],
  },
  {
    id: 'turnstile',
    title: ['配置 Turnstile', 'Turnstile'],
    fields: [
      text('TurnstileSiteKey', 'Turnstile Site Key', 'Turnstile site key'),
      secret('TurnstileSecretKey', 'Turnstile Secret Key', 'Turnstile secret key'),
    ],
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
    area('Notice', '公告', 'Notice', ['在此输入新的公告内容，支持 Markdown & HTML 代码', 'Markdown and HTML allowed']),
    ['设置公告', 'Notice'],
    ['公告更新失败', 'Failed to update the notice'],
  ),
  one(
    'system-name',
    text('SystemName', '系统名称', 'System name'),
    ['设置系统名称', 'System name'],
    ['系统名称更新失败', 'Failed to update the system name'],
  ),
  one(
    'logo',
    text('Logo', 'Logo 图片地址', 'Logo URL', ['在此输入 Logo 图片地址', 'Image URL']),
    ['设置 Logo', 'Logo'],
    ['Logo 更新失败', 'Failed to update the logo'],
  ),
  one(
    'home',
    area('HomePageContent', '首页内容', 'Home page content', [
      '在此输入首页内容，支持 Markdown & HTML 代码，或一个网址作为 iframe',
      'Markdown, HTML or a URL shown in a frame',
    ]),
    ['设置首页内容', 'Home page'],
    ['首页内容更新失败', 'Failed to update the home page'],
  ),
  one(
    'about',
    area('About', '关于', 'About', ['在此输入新的关于内容，支持 Markdown & HTML 代码', 'Markdown and HTML allowed']),
    ['设置关于', 'About'],
    ['关于内容更新失败', 'Failed to update the about page'],
  ),
  one(
    'footer',
    text('Footer', '页脚', 'Footer', [
      '在此输入新的页脚，留空则使用默认页脚，支持 HTML 代码',
      'HTML; empty for the default footer',
    ]),
    ['设置页脚', 'Footer'],
    ['页脚更新失败', 'Failed to update the footer'],
  ),
];
