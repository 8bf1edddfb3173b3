/**
 * The channel types of spec 01 section 3 (and new-api's 6-13, 20, 27, 43-49, 53, 56, 58-60): display name, where the provider lives by default,
 * the key format, the models the platform knows for the type, and whether a balance endpoint
 * exists. Type numbers are part of the API (the console and stored channels use them).
 */
export interface ChannelType {
  name: string;
  /** Used when a channel leaves base_url empty (fetching models, balances). */
  baseUrl: string;
  /** Parts of a key separated by `|` (or `-` for FastGPT), checked on save; empty: any text. */
  keyParts?: { sep: string; names: string[] };
  /** Default of `other` (API version, region...). */
  defaultOther?: string;
  models: string[];
}

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

export const CHANNEL_TYPES: Record<number, ChannelType> = {
  1: { name: 'OpenAI', baseUrl: 'https://api.openai.com', models: [...GPT, ...OPENAI_EXTRA] },
  2: { name: 'Midjourney Proxy', baseUrl: '', models: MJ },
  3: { name: 'Azure OpenAI', baseUrl: '', defaultOther: '2023-06-01-preview', models: [...GPT, ...OPENAI_EXTRA] },
  4: { name: 'Ollama', baseUrl: 'http://localhost:11434', models: ['llama3', 'qwen2', 'mistral'] },
  5: { name: 'Midjourney Proxy Plus', baseUrl: '', models: MJ },
  8: { name: '自定义渠道', baseUrl: '', models: [] },
  11: { name: 'Google PaLM2', baseUrl: 'https://generativelanguage.googleapis.com', models: ['PaLM-2'] },
  14: { name: 'Anthropic Claude', baseUrl: 'https://api.anthropic.com', models: CLAUDE },
  15: {
    name: '百度文心千帆',
    baseUrl: 'https://aip.baidubce.com',
    keyParts: { sep: '|', names: ['APIKey', 'SecretKey'] },
    models: ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-8K', 'ERNIE-Lite-8K', 'Embedding-V1'],
  },
  16: {
    name: '智谱 ChatGLM',
    baseUrl: 'https://open.bigmodel.cn',
    models: ['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite'],
  },
  17: {
    name: '阿里通义千问',
    baseUrl: 'https://dashscope.aliyuncs.com',
    models: ['qwen-turbo', 'qwen-plus', 'qwen-max', 'qwen-max-longcontext', 'text-embedding-v1'],
  },
  18: {
    name: '讯飞星火认知',
    baseUrl: '',
    keyParts: { sep: '|', names: ['APPID', 'APISecret', 'APIKey'] },
    defaultOther: 'v2.1',
    models: ['SparkDesk', 'SparkDesk-v1.1', 'SparkDesk-v2.1', 'SparkDesk-v3.1', 'SparkDesk-v3.5', 'SparkDesk-v4.0'],
  },
  20: {
    name: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api',
    models: ['openai/gpt-4o-mini', 'anthropic/claude-3.5-sonnet', 'google/gemini-2.5-pro', 'deepseek/deepseek-chat'],
  },
  19: {
    name: '360 智脑',
    baseUrl: 'https://ai.360.cn',
    models: ['360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1'],
  },
  21: { name: '知识库：AI Proxy', baseUrl: 'https://api.aiproxy.io', models: ['gpt-3.5-turbo', 'gpt-4'] },
  22: {
    name: '知识库：FastGPT',
    baseUrl: 'https://fastgpt.run/api/openapi',
    keyParts: { sep: '-', names: ['APIKey', 'AppId'] },
    models: ['gpt-3.5-turbo', 'gpt-4'],
  },
  23: {
    name: '腾讯混元',
    baseUrl: 'https://hunyuan.tencentcloudapi.com',
    keyParts: { sep: '|', names: ['AppId', 'SecretId', 'SecretKey'] },
    models: ['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro'],
  },
  24: { name: 'Google Gemini', baseUrl: 'https://generativelanguage.googleapis.com', models: GEMINI },
  25: {
    name: 'Moonshot',
    baseUrl: 'https://api.moonshot.cn',
    models: ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
  },
  26: { name: '智谱 GLM-4V', baseUrl: 'https://open.bigmodel.cn', models: ['glm-4', 'glm-4v', 'glm-3-turbo'] },
  27: {
    name: 'Perplexity',
    baseUrl: 'https://api.perplexity.ai',
    models: ['sonar', 'sonar-pro', 'sonar-reasoning', 'sonar-reasoning-pro'],
  },
  31: {
    name: '零一万物',
    baseUrl: 'https://api.lingyiwanwu.com',
    models: ['yi-large', 'yi-medium', 'yi-spark', 'yi-large-turbo'],
  },
  33: {
    name: 'AWS Claude',
    baseUrl: '',
    keyParts: { sep: '|', names: ['Ak', 'Sk', 'Region'] },
    models: CLAUDE,
  },
  34: { name: 'Cohere', baseUrl: 'https://api.cohere.ai', models: ['command-r', 'command-r-plus', 'command-light'] },
  35: {
    name: 'MiniMax',
    baseUrl: 'https://api.minimax.chat',
    models: ['abab6.5-chat', 'abab6.5s-chat', 'abab5.5-chat'],
  },
  36: { name: 'Suno API', baseUrl: '', models: ['suno_music', 'suno_lyrics'] },
  37: { name: 'Dify', baseUrl: '', models: ['dify'] },
  38: {
    name: 'Jina',
    baseUrl: 'https://api.jina.ai',
    models: ['jina-embeddings-v2-base-en', 'jina-reranker-v2-base-multilingual'],
  },
  39: {
    name: 'Cloudflare',
    baseUrl: 'https://api.cloudflare.com',
    models: ['@cf/meta/llama-3-8b-instruct', '@cf/mistral/mistral-7b-instruct-v0.1'],
  },
  40: {
    name: 'SiliconCloud',
    baseUrl: 'https://api.siliconflow.cn',
    models: ['deepseek-ai/DeepSeek-V3', 'Qwen/Qwen2.5-72B-Instruct', 'THUDM/glm-4-9b-chat'],
  },
  41: { name: 'Vertex AI', baseUrl: '', models: [...GEMINI, ...CLAUDE] },
  42: {
    name: 'Mistral AI',
    baseUrl: 'https://api.mistral.ai',
    models: ['mistral-large-latest', 'mistral-small-latest', 'open-mistral-nemo'],
  },
  // Video platforms, served by the tasks service (new-api's numbers).
  50: {
    name: '可灵 Kling',
    baseUrl: 'https://api-beijing.klingai.com',
    keyParts: { sep: '|', names: ['AccessKey', 'SecretKey'] },
    models: ['kling-v1', 'kling-v1-6', 'kling-v2-master'],
  },
  51: {
    name: '即梦 Jimeng',
    baseUrl: 'https://visual.volcengineapi.com',
    keyParts: { sep: '|', names: ['AccessKey', 'SecretKey'] },
    models: ['jimeng_vgfm_t2v_l20', 'jimeng_vgfm_i2v_l20', 'jimeng_t2v_v30', 'jimeng_i2v_first_v30'],
  },
  52: { name: 'Vidu', baseUrl: 'https://api.vidu.cn', models: ['viduq1', 'viduq2', 'vidu2.0', 'vidu1.5'] },
  54: {
    name: '豆包视频',
    baseUrl: 'https://ark.cn-beijing.volces.com',
    models: [
      'doubao-seedance-1-0-pro-250528',
      'doubao-seedance-1-0-lite-t2v-250428',
      'doubao-seedance-1-0-lite-i2v-250428',
    ],
  },
  55: { name: 'Sora', baseUrl: 'https://api.openai.com', models: ['sora-2', 'sora-2-pro'] },
  43: { name: 'DeepSeek', baseUrl: 'https://api.deepseek.com', models: ['deepseek-chat', 'deepseek-reasoner'] },
  45: {
    name: '字节火山方舟、豆包',
    baseUrl: 'https://ark.cn-beijing.volces.com',
    models: ['doubao-1.5-pro-32k', 'doubao-1.5-lite-32k', 'doubao-seed-1.6', 'doubao-embedding'],
  },
  48: { name: 'xAI', baseUrl: 'https://api.x.ai', models: ['grok-3', 'grok-3-mini', 'grok-4', 'grok-2-image'] },
  // new-api's OpenAI-compatible resellers (6-13) and gateways (59, 60: no default host).
  6: { name: 'OpenAIMax', baseUrl: 'https://api.openaimax.com', models: GPT },
  7: { name: 'OhMyGPT', baseUrl: 'https://api.ohmygpt.com', models: GPT },
  9: { name: 'AILS', baseUrl: 'https://api.caipacity.com', models: GPT },
  10: { name: 'AIProxy', baseUrl: 'https://api.aiproxy.io', models: GPT },
  12: { name: 'API2GPT', baseUrl: 'https://api.api2gpt.com', models: GPT },
  13: { name: 'AIGC2D', baseUrl: 'https://api.aigc2d.com', models: GPT },
  44: { name: 'MokaAI', baseUrl: 'https://api.moka.ai', models: ['m3e-large', 'm3e-base', 'm3e-small'] },
  46: {
    name: '百度千帆 V2',
    baseUrl: 'https://qianfan.baidubce.com',
    models: ['ernie-4.0-8k', 'ernie-4.0-turbo-8k', 'ernie-3.5-8k', 'ernie-speed-8k', 'ernie-lite-8k', 'embedding-v1'],
  },
  47: { name: 'Xinference', baseUrl: '', models: ['bge-reranker-v2-m3', 'jina-reranker-v2'] },
  49: { name: 'Coze', baseUrl: 'https://api.coze.cn', models: [] },
  53: {
    name: 'Submodel',
    baseUrl: 'https://llm.submodel.ai',
    models: [
      'deepseek-ai/DeepSeek-V3.1',
      'deepseek-ai/DeepSeek-R1',
      'Qwen/Qwen3-235B-A22B-Instruct-2507',
      'openai/gpt-oss-120b',
    ],
  },
  56: {
    name: 'Replicate',
    baseUrl: 'https://api.replicate.com',
    models: ['black-forest-labs/flux-1.1-pro', 'black-forest-labs/flux-schnell', 'black-forest-labs/flux-dev'],
  },
  // Routes in the channel's settings.advanced_routes (relay: adaptors/advanced-custom.ts).
  58: { name: '高级自定义', baseUrl: '', models: [] },
  59: { name: 'Sub2API', baseUrl: '', models: [] },
  60: { name: 'New API', baseUrl: '', models: [] },
};

/** Whether a number is a known channel type. */
export const isChannelType = (type: number): boolean => Object.hasOwn(CHANNEL_TYPES, type);

/** The base URL a channel calls: its own, else its type's default. */
export function effectiveBaseUrl(type: number, baseUrl: string): string {
  return (baseUrl || CHANNEL_TYPES[type]?.baseUrl || '').replace(/\/+$/, '');
}
