import { tr } from '../../locale/translate.ts';
/** The channel types (spec 01 section 3, and new-api's OpenAI-format ones) as the console shows them, with key hints. */
export interface ChannelTypeOption {
  value: number;
  label: string;
  color: string;
}

// biome-ignore format: one type per line reads as the table it is
export const CHANNEL_TYPE_OPTIONS: ChannelTypeOption[] = [
  { value: 1, label: 'OpenAI', color: 'green' },
  { value: 2, label: 'Midjourney Proxy', color: 'lime' },
  { value: 3, label: 'Azure OpenAI', color: 'arcoblue' },
  { value: 4, label: 'Ollama', color: 'gray' },
  { value: 5, label: 'Midjourney Proxy Plus', color: 'lime' },
  { value: 8, get label() {
    return tr('channel.customChannel');
  }, color: 'pinkpurple' },
  { value: 11, label: 'Google PaLM2', color: 'orange' },
  { value: 14, label: 'Anthropic Claude', color: 'orangered' },
  { value: 15, get label() {
    return tr('channel.baiduWenxinQianfan');
  }, color: 'blue' },
  { value: 16, get label() {
    return tr('channel.zhipuChatglm');
  }, color: 'purple' },
  { value: 17, get label() {
    return tr('channel.alibabaTongyiQianwen');
  }, color: 'orange' },
  { value: 18, get label() {
    return tr('channel.iflytekSpark');
  }, color: 'cyan' },
  { value: 19, get label() {
    return tr('channel.360Zhinao');
  }, color: 'gray' },
  { value: 21, get label() {
    return tr('channel.knowledgeBaseAiProxy');
  }, color: 'magenta' },
  { value: 22, get label() {
    return tr('channel.knowledgeBaseFastgpt');
  }, color: 'blue' },
  { value: 23, get label() {
    return tr('channel.tencentHunyuan');
  }, color: 'arcoblue' },
  { value: 24, label: 'Google Gemini', color: 'orange' },
  { value: 25, label: 'Moonshot', color: 'gray' },
  { value: 26, get label() {
    return tr('channel.zhipuGlm4v');
  }, color: 'purple' },
  { value: 31, get label() {
    return tr('channel.01Ai');
  }, color: 'green' },
  { value: 33, label: 'AWS Claude', color: 'orangered' },
  { value: 34, label: 'Cohere', color: 'purple' },
  { value: 35, label: 'MiniMax', color: 'green' },
  { value: 36, label: 'Suno API', color: 'magenta' },
  { value: 37, label: 'Dify', color: 'cyan' },
  { value: 38, label: 'Jina', color: 'blue' },
  { value: 39, label: 'Cloudflare', color: 'gold' },
  { value: 40, label: 'SiliconCloud', color: 'purple' },
  { value: 41, label: 'Vertex AI', color: 'blue' },
  { value: 42, label: 'Mistral AI', color: 'orange' },
  { value: 50, label: 'Kling', color: 'purple' },
  { value: 51, get label() {
    return tr('channel.jimeng');
  }, color: 'arcoblue' },
  { value: 52, label: 'Vidu', color: 'purple' },
  { value: 54, get label() {
    return tr('channel.doubaoVideo');
  }, color: 'arcoblue' },
  { value: 55, label: 'Sora', color: 'green' },
  { value: 20, label: 'OpenRouter', color: 'gray' },
  { value: 27, label: 'Perplexity', color: 'cyan' },
  { value: 43, label: 'DeepSeek', color: 'blue' },
  { value: 45, get label() {
    return tr('channel.volcEngine');
  }, color: 'arcoblue' },
  { value: 48, label: 'xAI', color: 'gray' },
  { value: 6, label: 'OpenAIMax', color: 'green' },
  { value: 7, label: 'OhMyGPT', color: 'green' },
  { value: 9, label: 'AILS', color: 'green' },
  { value: 10, label: 'AIProxy', color: 'magenta' },
  { value: 12, label: 'API2GPT', color: 'green' },
  { value: 13, label: 'AIGC2D', color: 'green' },
  { value: 44, label: 'MokaAI', color: 'gray' },
  { value: 46, get label() {
    return tr('channel.baiduQianfanV2');
  }, color: 'blue' },
  { value: 47, label: 'Xinference', color: 'purple' },
  { value: 49, label: 'Coze', color: 'blue' },
  { value: 53, label: 'Submodel', color: 'cyan' },
  { value: 56, label: 'Replicate', color: 'gray' },
  { value: 58, get label() {
    return tr('channel.advancedCustom');
  }, color: 'pinkpurple' },
  { value: 59, label: 'Sub2API', color: 'orange' },
  { value: 60, label: 'New API', color: 'pinkpurple' },
];

export const channelTypeOf = (type: number) => CHANNEL_TYPE_OPTIONS.find((o) => o.value === type);

/** Key format hints of spec 01 section 5 (and of the video types: 50 Kling, 51 Jimeng, 55 Sora). */
export function keyHint(type: number): string {
  switch (type) {
    case 15:
      return tr('channel.enterInThisFormatApikey');
    case 18:
      return tr('channel.enterInThisFormatAppid');
    case 22:
      return tr('channel.enterInThisFormatApikey2');
    case 23:
      return tr('channel.enterInThisFormatAppid2');
    case 33:
      return tr('channel.enterInThisFormatAk');
    case 41:
      return tr('channel.enterTheServiceAccountJson');
    case 50:
    case 51:
      return tr('channel.enterInThisFormatAccesskey');
    case 55:
      return tr('channel.enterTheOpenaiVideoApiKey');
    default:
      return tr('channel.enterTheChannelSAuthentication');
  }
}

/** One input of a key made of parts (spec 01 section 5 key formats). */
export interface KeyPart {
  label: string;
  placeholder: string;
  secret?: boolean;
}

/** Types whose key is several values joined by `sep`: the form shows one input per value. */
export function keyParts(type: number): { sep: string; parts: KeyPart[] } | undefined {
  switch (type) {
    case 15:
      return {
        sep: '|',
        parts: [
          { label: tr('channelKeys.apiKey'), placeholder: tr('channelKeys.baiduApiKeyHint') },
          { label: tr('channelKeys.secretKeyPlain'), placeholder: tr('channelKeys.baiduSecretHint'), secret: true },
        ],
      };
    case 18:
      return {
        sep: '|',
        parts: [
          { label: 'APPID', placeholder: tr('channelKeys.sparkAppIdHint') },
          { label: 'APISecret', placeholder: 'APISecret', secret: true },
          { label: 'APIKey', placeholder: 'APIKey' },
        ],
      };
    case 22:
      return {
        sep: '-',
        parts: [
          { label: tr('channelKeys.apiKey'), placeholder: 'fastgpt-...', secret: true },
          { label: tr('channelKeys.appId'), placeholder: tr('channelKeys.fastgptAppIdHint') },
        ],
      };
    case 23:
      return {
        sep: '|',
        parts: [
          { label: tr('channelKeys.appId'), placeholder: tr('channelKeys.hunyuanAppIdHint') },
          { label: tr('channelKeys.secretId'), placeholder: tr('channelKeys.hunyuanSecretIdHint') },
          { label: tr('channelKeys.secretKeyPlain'), placeholder: tr('channelKeys.secretKeyPlain'), secret: true },
        ],
      };
    case 33:
      return {
        sep: '|',
        parts: [
          { label: tr('channelKeys.accessKey'), placeholder: 'AKIA...' },
          { label: tr('channelKeys.secretKey'), placeholder: tr('channelKeys.secretKey'), secret: true },
          { label: tr('channelKeys.region'), placeholder: tr('channelKeys.awsRegionHint') },
        ],
      };
    case 50:
      return {
        sep: '|',
        parts: [
          { label: 'AccessKey', placeholder: tr('channelKeys.klingAccessKeyHint') },
          { label: 'SecretKey', placeholder: tr('channelKeys.klingSecretKeyHint'), secret: true },
        ],
      };
    case 51:
      return {
        sep: '|',
        parts: [
          { label: 'AccessKey', placeholder: tr('channelKeys.jimengAccessKeyHint') },
          { label: 'SecretKey', placeholder: tr('channelKeys.jimengSecretKeyHint'), secret: true },
        ],
      };
    default:
      return undefined;
  }
}

/** The key of its parts: '' when all are empty (an edit keeping the key). */
export function joinKeyParts(type: number, values: string[]): string {
  const def = keyParts(type);
  if (!def || values.every((v) => !v.trim())) return '';
  return def.parts.map((_p, i) => (values[i] ?? '').trim()).join(def.sep);
}

/** Multi-key state of a channel row (multi_key_status), undefined for single-key channels. */
export function multiKeyState(
  mode: string | undefined,
  status: string | undefined,
): { size: number; disabled: { index: number; reason: string; time: number }[] } | undefined {
  if (!mode || !status) return undefined;
  try {
    const o = JSON.parse(status) as { size?: number; disabled?: { index: number; reason: string; time: number }[] };
    return { size: o.size ?? 0, disabled: o.disabled ?? [] };
  } catch {
    return undefined;
  }
}

/** What `other` means for a type (empty: the field is hidden). */
export function otherLabel(type: number): string {
  if (type === 3) return tr('channel.defaultApiVersion');
  if (type === 18) return tr('channel.modelVersion');
  if (type === 41) return tr('channel.regionOrJsonModelRegion');
  if (type === 21) return tr('channel.knowledgeBaseId');
  if (type === 49) return tr('channel.cozeBotId');
  return '';
}

/** The hint under `other` for a type. */
export function otherHint(type: number): string {
  if (type === 41) return tr('channelKeys.vertexRegionHint');
  if (type === 18) return tr('channelKeys.sparkVersionHint');
  return '';
}

/** Defaults of `other` (spec 01 section 5). */
export function defaultOther(type: number): string {
  if (type === 3) return '2023-06-01-preview';
  if (type === 18) return 'v2.1';
  return '';
}

/** Response-time badge (spec 01 section 4): 0 untested; <=1 s green; <=3 s lime; <=5 s yellow; else red. */
export function responseTimeBadge(ms: number): { color: string; text: string } {
  if (!ms) return { color: 'gray', text: tr('channel.notTested') };
  const text = tr('common.seconds', { n: (ms / 1000).toFixed(2) });
  if (ms <= 1000) return { color: 'green', text };
  if (ms <= 3000) return { color: 'lime', text };
  if (ms <= 5000) return { color: 'gold', text };
  return { color: 'red', text };
}

/** status_reason and status_time of other_info, when present. */
export function statusReason(otherInfo: string): { reason: string; time: number } | undefined {
  if (!otherInfo) return undefined;
  try {
    const o = JSON.parse(otherInfo) as { status_reason?: string; status_time?: number };
    return { reason: o.status_reason ?? '', time: o.status_time ?? 0 };
  } catch {
    return undefined;
  }
}
