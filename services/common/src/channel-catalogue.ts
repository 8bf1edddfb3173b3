/**
 * The channel-type catalogue: the one place a provider's per-type data lives (issue 22.4). The
 * channels service checks keys and fills defaults from it, the gateway serves it to admins at
 * `GET /api/channel/types`, and the console builds its type picker, list tags and per-type form
 * fields from that answer. Adding a provider = its adaptor (relay or tasks), its fake, one entry
 * here (docs/development.md). Type numbers are part of the API and new-api's where it has them.
 */

/** A text the console shows, in its two languages. */
export interface CatalogueText {
  zh: string;
  en: string;
}

/** One value of a key made of several values (spec 01 section 5 key formats). */
export interface KeyPart {
  /** The part's name in the key format, e.g. `Ak` in `Ak|Sk|Region`. */
  name: string;
  label: CatalogueText;
  placeholder: CatalogueText;
  secret?: boolean;
}

export interface ChannelTypeEntry {
  type: number;
  /** Display name, as the spec writes it (Chinese where it gives one). */
  name: string;
  /** The English name, when it is not the same. */
  nameEn?: string;
  /** Arco colour of the type's tag in the channel list. */
  color: string;
  /** Used when a channel leaves base_url empty (fetching models, balances). */
  baseUrl: string;
  /** Which service relays the type: the relay's adaptors or the tasks service's platforms. */
  servedBy: 'relay' | 'tasks';
  /** Placeholder of the key box (default: the generic "enter the key" hint). */
  keyHint?: CatalogueText;
  /** A key of parts joined by `sep`, checked on save; the form shows one input per part. */
  keyParts?: { sep: string; parts: KeyPart[] };
  /** What `other` means for the type; absent: the form hides the field. */
  other?: { label: CatalogueText; hint?: CatalogueText; default?: string };
  /** Form fields that only some types have. */
  form?: {
    /** Label and placeholder of base_url when not the generic ones. */
    baseUrlLabel?: CatalogueText;
    baseUrlPlaceholder?: CatalogueText;
    /** The OpenAI-Organization field and the "fetch upstream models" button. */
    openaiOrganization?: boolean;
    /** One key per channel only (no multi-key mode, no batch), in a tall text area. */
    singleKey?: boolean;
  };
  /** The models the platform knows for the type (the form's "fill in the type's models"). */
  models: string[];
}

const t = (zh: string, en: string): CatalogueText => ({ zh, en });
const same = (s: string) => t(s, s);
const part = (name: string, label: CatalogueText, placeholder: CatalogueText, secret = false): KeyPart =>
  secret ? { name, label, placeholder, secret } : { name, label, placeholder };
const format = (f: string, example = '') =>
  t(
    `按照如下格式输入：${f}${example ? `，例如：${example}` : ''}`,
    `Enter in this format: ${f}${example ? `, for example: ${example}` : ''}`,
  );

const GPT = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'gpt-4.1-mini',
  'gpt-4-turbo',
  'gpt-4',
  'gpt-3.5-turbo',
  'o1',
  'o1-mini',
  'o3-mini',
];
const OPENAI_EXTRA = [
  'text-embedding-3-small',
  'text-embedding-3-large',
  'text-embedding-ada-002',
  'dall-e-3',
  'whisper-1',
  'tts-1',
  'tts-1-hd',
];
const CLAUDE = [
  'claude-3-haiku-20240307',
  'claude-3-opus-20240229',
  'claude-3-5-haiku-20241022',
  'claude-3-5-sonnet-20240620',
  'claude-3-5-sonnet-20241022',
  'claude-3-7-sonnet-20250219',
];
const GEMINI = ['gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-2.0-flash', 'gemini-2.5-pro', 'gemini-2.5-flash'];
const MJ = ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe'];

const relay = (type: number, name: string, color: string, baseUrl: string, models: string[]): ChannelTypeEntry => ({
  type,
  name,
  color,
  baseUrl,
  servedBy: 'relay',
  models,
});
const tasks = (type: number, name: string, color: string, baseUrl: string, models: string[]): ChannelTypeEntry => ({
  ...relay(type, name, color, baseUrl, models),
  servedBy: 'tasks',
});
const en = (nameEn: string, e: ChannelTypeEntry): ChannelTypeEntry => ({ ...e, nameEn });

/** The catalogue, in the order the console's type picker lists it. */
export const CHANNEL_CATALOGUE: readonly ChannelTypeEntry[] = [
  {
    ...relay(1, 'OpenAI', 'green', 'https://api.openai.com', [...GPT, ...OPENAI_EXTRA]),
    form: { openaiOrganization: true },
  },
  tasks(2, 'Midjourney Proxy', 'lime', '', MJ),
  {
    ...relay(3, 'Azure OpenAI', 'arcoblue', '', [...GPT, ...OPENAI_EXTRA]),
    other: { label: t('默认 API 版本', 'Default API version'), default: '2023-06-01-preview' },
    form: {
      baseUrlLabel: same('AZURE_OPENAI_ENDPOINT'),
      baseUrlPlaceholder: t(
        '例如：https://docs-test-001.openai.azure.com',
        'For example: https://docs-test-001.openai.azure.com',
      ),
    },
  },
  relay(4, 'Ollama', 'gray', 'http://localhost:11434', ['llama3', 'qwen2', 'mistral']),
  tasks(5, 'Midjourney Proxy Plus', 'lime', '', MJ),
  en('Custom channel', relay(8, '自定义渠道', 'pinkpurple', '', [])),
  relay(11, 'Google PaLM2', 'orange', 'https://generativelanguage.googleapis.com', ['PaLM-2']),
  relay(14, 'Anthropic Claude', 'orangered', 'https://api.anthropic.com', CLAUDE),
  {
    ...en(
      'Baidu Wenxin Qianfan',
      relay(15, '百度文心千帆', 'blue', 'https://aip.baidubce.com', [
        'ERNIE-4.0-8K',
        'ERNIE-3.5-8K',
        'ERNIE-Speed-8K',
        'ERNIE-Lite-8K',
        'Embedding-V1',
      ]),
    ),
    keyHint: format('APIKey|SecretKey'),
    keyParts: {
      sep: '|',
      parts: [
        part('APIKey', same('API Key'), t('千帆应用的 API Key', 'API Key of the Qianfan application')),
        part('SecretKey', same('SecretKey'), t('千帆应用的 Secret Key', 'Secret Key of the Qianfan application'), true),
      ],
    },
  },
  en(
    'Zhipu ChatGLM',
    relay(16, '智谱 ChatGLM', 'purple', 'https://open.bigmodel.cn', [
      'chatglm_turbo',
      'chatglm_pro',
      'chatglm_std',
      'chatglm_lite',
    ]),
  ),
  en(
    'Alibaba Tongyi Qianwen',
    relay(17, '阿里通义千问', 'orange', 'https://dashscope.aliyuncs.com', [
      'qwen-turbo',
      'qwen-plus',
      'qwen-max',
      'qwen-max-longcontext',
      'text-embedding-v1',
    ]),
  ),
  {
    ...en(
      'iFlytek Spark',
      relay(18, '讯飞星火认知', 'cyan', '', [
        'SparkDesk',
        'SparkDesk-v1.1',
        'SparkDesk-v2.1',
        'SparkDesk-v3.1',
        'SparkDesk-v3.5',
        'SparkDesk-v4.0',
      ]),
    ),
    keyHint: format('APPID|APISecret|APIKey'),
    keyParts: {
      sep: '|',
      parts: [
        part('APPID', same('APPID'), t('讯飞开放平台应用的 APPID', 'APPID of the iFlytek application')),
        part('APISecret', same('APISecret'), same('APISecret'), true),
        part('APIKey', same('APIKey'), same('APIKey')),
      ],
    },
    other: {
      label: t('模型版本', 'Model version'),
      hint: t('接口版本，例如 v3.5', 'API version, e.g. v3.5'),
      default: 'v2.1',
    },
  },
  en(
    '360 Zhinao',
    relay(19, '360 智脑', 'gray', 'https://ai.360.cn', [
      '360GPT_S2_V9',
      'embedding-bert-512-v1',
      'embedding_s1_v1',
      'semantic_similarity_s1_v1',
    ]),
  ),
  {
    ...en(
      'Knowledge base: AI Proxy',
      relay(21, '知识库：AI Proxy', 'magenta', 'https://api.aiproxy.io', ['gpt-3.5-turbo', 'gpt-4']),
    ),
    other: { label: t('知识库 ID', 'Knowledge base ID') },
  },
  {
    ...en(
      'Knowledge base: FastGPT',
      relay(22, '知识库：FastGPT', 'blue', 'https://fastgpt.run/api/openapi', ['gpt-3.5-turbo', 'gpt-4']),
    ),
    keyHint: format('APIKey-AppId', 'fastgpt-0sp2gtvfdgyi4k30jwlgwf1i-64f335d84283f05518e9e041'),
    keyParts: {
      sep: '-',
      parts: [
        part('APIKey', same('API Key'), same('fastgpt-...'), true),
        part('AppId', same('App ID'), t('FastGPT 应用 ID', 'FastGPT application id')),
      ],
    },
  },
  {
    ...en(
      'Tencent Hunyuan',
      relay(23, '腾讯混元', 'arcoblue', 'https://hunyuan.tencentcloudapi.com', [
        'hunyuan-lite',
        'hunyuan-standard',
        'hunyuan-pro',
      ]),
    ),
    keyHint: format('AppId|SecretId|SecretKey'),
    keyParts: {
      sep: '|',
      parts: [
        part('AppId', same('App ID'), t('腾讯云账号的 AppId', 'AppId of the Tencent Cloud account')),
        part('SecretId', same('SecretId'), t('访问管理中的 SecretId', 'SecretId from access management')),
        part('SecretKey', same('SecretKey'), same('SecretKey'), true),
      ],
    },
  },
  relay(24, 'Google Gemini', 'orange', 'https://generativelanguage.googleapis.com', GEMINI),
  relay(25, 'Moonshot', 'gray', 'https://api.moonshot.cn', ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k']),
  en(
    'Zhipu GLM-4V',
    relay(26, '智谱 GLM-4V', 'purple', 'https://open.bigmodel.cn', ['glm-4', 'glm-4v', 'glm-3-turbo']),
  ),
  en(
    '01.AI',
    relay(31, '零一万物', 'green', 'https://api.lingyiwanwu.com', [
      'yi-large',
      'yi-medium',
      'yi-spark',
      'yi-large-turbo',
    ]),
  ),
  {
    ...relay(33, 'AWS Claude', 'orangered', '', CLAUDE),
    keyHint: format('Ak|Sk|Region'),
    keyParts: {
      sep: '|',
      parts: [
        part('Ak', t('Access Key（Ak）', 'Access Key (Ak)'), same('AKIA...')),
        part('Sk', t('Secret Key（Sk）', 'Secret Key (Sk)'), t('Secret Key（Sk）', 'Secret Key (Sk)'), true),
        part(
          'Region',
          t('区域（Region）', 'Region'),
          t('Bedrock 所在区域，例如 us-east-1', 'Bedrock region, e.g. us-east-1'),
        ),
      ],
    },
  },
  relay(34, 'Cohere', 'purple', 'https://api.cohere.ai', ['command-r', 'command-r-plus', 'command-light']),
  relay(35, 'MiniMax', 'green', 'https://api.minimax.chat', ['abab6.5-chat', 'abab6.5s-chat', 'abab5.5-chat']),
  tasks(36, 'Suno API', 'magenta', '', ['suno_music', 'suno_lyrics']),
  relay(37, 'Dify', 'cyan', '', ['dify']),
  relay(38, 'Jina', 'blue', 'https://api.jina.ai', [
    'jina-embeddings-v2-base-en',
    'jina-reranker-v2-base-multilingual',
  ]),
  relay(39, 'Cloudflare', 'gold', 'https://api.cloudflare.com', [
    '@cf/meta/llama-3-8b-instruct',
    '@cf/mistral/mistral-7b-instruct-v0.1',
  ]),
  relay(40, 'SiliconCloud', 'purple', 'https://api.siliconflow.cn', [
    'deepseek-ai/DeepSeek-V3',
    'Qwen/Qwen2.5-72B-Instruct',
    'THUDM/glm-4-9b-chat',
  ]),
  {
    ...relay(41, 'Vertex AI', 'blue', '', [...GEMINI, ...CLAUDE]),
    keyHint: t('请输入服务账号 JSON（Service Account JSON）', 'Enter the Service Account JSON'),
    other: {
      label: t('部署地区（或 JSON：模型 -> 地区）', 'Region (or JSON: model -> region)'),
      hint: t(
        '例如 us-central1，或 {"default":"us-central1","claude-3-5-sonnet-20241022":"us-east5"}',
        'e.g. us-central1, or {"default":"us-central1","claude-3-5-sonnet-20241022":"us-east5"}',
      ),
    },
    form: { singleKey: true },
  },
  relay(42, 'Mistral AI', 'orange', 'https://api.mistral.ai', [
    'mistral-large-latest',
    'mistral-small-latest',
    'open-mistral-nemo',
  ]),
  // Video platforms, served by the tasks service (new-api's numbers).
  {
    ...tasks(50, 'Kling', 'purple', 'https://api-beijing.klingai.com', ['kling-v1', 'kling-v1-6', 'kling-v2-master']),
    keyHint: format('AccessKey|SecretKey'),
    keyParts: {
      sep: '|',
      parts: [
        part('AccessKey', same('AccessKey'), t('可灵开放平台的 AccessKey', 'AccessKey of the Kling open platform')),
        part(
          'SecretKey',
          same('SecretKey'),
          t('可灵开放平台的 SecretKey', 'SecretKey of the Kling open platform'),
          true,
        ),
      ],
    },
  },
  {
    ...en(
      'Jimeng',
      tasks(51, '即梦', 'arcoblue', 'https://visual.volcengineapi.com', [
        'jimeng_vgfm_t2v_l20',
        'jimeng_vgfm_i2v_l20',
        'jimeng_t2v_v30',
        'jimeng_i2v_first_v30',
      ]),
    ),
    keyHint: format('AccessKey|SecretKey'),
    keyParts: {
      sep: '|',
      parts: [
        part(
          'AccessKey',
          same('AccessKey'),
          t('火山引擎访问控制中的 AccessKeyId', 'AccessKeyId from VolcEngine access control'),
        ),
        part(
          'SecretKey',
          same('SecretKey'),
          t('火山引擎访问控制中的 SecretAccessKey', 'SecretAccessKey from VolcEngine access control'),
          true,
        ),
      ],
    },
  },
  tasks(52, 'Vidu', 'purple', 'https://api.vidu.cn', ['viduq1', 'viduq2', 'vidu2.0', 'vidu1.5']),
  en(
    'Doubao Video',
    tasks(54, '豆包视频', 'arcoblue', 'https://ark.cn-beijing.volces.com', [
      'doubao-seedance-1-0-pro-250528',
      'doubao-seedance-1-0-lite-t2v-250428',
      'doubao-seedance-1-0-lite-i2v-250428',
    ]),
  ),
  {
    ...tasks(55, 'Sora', 'green', 'https://api.openai.com', ['sora-2', 'sora-2-pro']),
    keyHint: t('请输入 OpenAI 视频接口（Sora）的 API Key', 'Enter the API key of the OpenAI videos API (Sora)'),
  },
  // new-api's OpenAI-format types.
  relay(20, 'OpenRouter', 'gray', 'https://openrouter.ai/api', [
    'openai/gpt-4o-mini',
    'anthropic/claude-3.5-sonnet',
    'google/gemini-2.5-pro',
    'deepseek/deepseek-chat',
  ]),
  relay(27, 'Perplexity', 'cyan', 'https://api.perplexity.ai', [
    'sonar',
    'sonar-pro',
    'sonar-reasoning',
    'sonar-reasoning-pro',
  ]),
  relay(43, 'DeepSeek', 'blue', 'https://api.deepseek.com', ['deepseek-chat', 'deepseek-reasoner']),
  en(
    'VolcEngine Ark (Doubao)',
    relay(45, '字节火山方舟、豆包', 'arcoblue', 'https://ark.cn-beijing.volces.com', [
      'doubao-1.5-pro-32k',
      'doubao-1.5-lite-32k',
      'doubao-seed-1.6',
      'doubao-embedding',
    ]),
  ),
  relay(48, 'xAI', 'gray', 'https://api.x.ai', ['grok-3', 'grok-3-mini', 'grok-4', 'grok-2-image']),
  // new-api's OpenAI-compatible resellers (6-13) and the rest of its types.
  relay(6, 'OpenAIMax', 'green', 'https://api.openaimax.com', GPT),
  relay(7, 'OhMyGPT', 'green', 'https://api.ohmygpt.com', GPT),
  relay(9, 'AILS', 'green', 'https://api.caipacity.com', GPT),
  relay(10, 'AIProxy', 'magenta', 'https://api.aiproxy.io', GPT),
  relay(12, 'API2GPT', 'green', 'https://api.api2gpt.com', GPT),
  relay(13, 'AIGC2D', 'green', 'https://api.aigc2d.com', GPT),
  relay(44, 'MokaAI', 'gray', 'https://api.moka.ai', ['m3e-large', 'm3e-base', 'm3e-small']),
  en(
    'Baidu Qianfan V2',
    relay(46, '百度千帆 V2', 'blue', 'https://qianfan.baidubce.com', [
      'ernie-4.0-8k',
      'ernie-4.0-turbo-8k',
      'ernie-3.5-8k',
      'ernie-speed-8k',
      'ernie-lite-8k',
      'embedding-v1',
    ]),
  ),
  relay(47, 'Xinference', 'purple', '', ['bge-reranker-v2-m3', 'jina-reranker-v2']),
  {
    ...relay(49, 'Coze', 'blue', 'https://api.coze.cn', []),
    other: { label: t('智能体 ID（Coze 的 bot_id）', 'Agent ID (Coze bot_id)') },
  },
  relay(53, 'Submodel', 'cyan', 'https://llm.submodel.ai', [
    'deepseek-ai/DeepSeek-V3.1',
    'deepseek-ai/DeepSeek-R1',
    'Qwen/Qwen3-235B-A22B-Instruct-2507',
    'openai/gpt-oss-120b',
  ]),
  relay(56, 'Replicate', 'gray', 'https://api.replicate.com', [
    'black-forest-labs/flux-1.1-pro',
    'black-forest-labs/flux-schnell',
    'black-forest-labs/flux-dev',
  ]),
  // Routes in the channel's settings.advanced_routes (relay: adaptors/advanced-custom.ts); 59, 60
  // are gateways with no default host.
  en('Advanced Custom', relay(58, '高级自定义', 'pinkpurple', '', [])),
  relay(59, 'Sub2API', 'orange', '', []),
  relay(60, 'New API', 'pinkpurple', '', []),
];

const BY_TYPE = new Map(CHANNEL_CATALOGUE.map((e) => [e.type, e]));

/** The catalogue entry of a type, undefined for an unknown number. */
export const channelTypeEntry = (type: number): ChannelTypeEntry | undefined => BY_TYPE.get(type);

/** Whether a number is a known channel type. */
export const isChannelType = (type: number): boolean => BY_TYPE.has(type);

/** The base URL a channel calls: its own, else its type's default. */
export function effectiveBaseUrl(type: number, baseUrl: string): string {
  return (baseUrl || BY_TYPE.get(type)?.baseUrl || '').replace(/\/+$/, '');
}
