/** The 30 channel types (spec 01 section 3) as the console shows them, with key hints. */
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
  { value: 8, label: '自定义渠道', color: 'pinkpurple' },
  { value: 11, label: 'Google PaLM2', color: 'orange' },
  { value: 14, label: 'Anthropic Claude', color: 'orangered' },
  { value: 15, label: '百度文心千帆', color: 'blue' },
  { value: 16, label: '智谱 ChatGLM', color: 'purple' },
  { value: 17, label: '阿里通义千问', color: 'orange' },
  { value: 18, label: '讯飞星火认知', color: 'cyan' },
  { value: 19, label: '360 智脑', color: 'gray' },
  { value: 21, label: '知识库：AI Proxy', color: 'magenta' },
  { value: 22, label: '知识库：FastGPT', color: 'blue' },
  { value: 23, label: '腾讯混元', color: 'arcoblue' },
  { value: 24, label: 'Google Gemini', color: 'orange' },
  { value: 25, label: 'Moonshot', color: 'gray' },
  { value: 26, label: '智谱 GLM-4V', color: 'purple' },
  { value: 31, label: '零一万物', color: 'green' },
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
];

export const channelTypeOf = (type: number) => CHANNEL_TYPE_OPTIONS.find((o) => o.value === type);

/** Key format hints of spec 01 section 5. */
export function keyHint(type: number): string {
  switch (type) {
    case 15:
      return '按照如下格式输入：APIKey|SecretKey';
    case 18:
      return '按照如下格式输入：APPID|APISecret|APIKey';
    case 22:
      return '按照如下格式输入：APIKey-AppId，例如：fastgpt-0sp2gtvfdgyi4k30jwlgwf1i-64f335d84283f05518e9e041';
    case 23:
      return '按照如下格式输入：AppId|SecretId|SecretKey';
    case 33:
      return '按照如下格式输入：Ak|Sk|Region';
    case 41:
      return '请输入服务账号 JSON（Service Account JSON）';
    default:
      return '请输入渠道对应的鉴权密钥';
  }
}

/** What `other` means for a type (empty: the field is hidden). */
export function otherLabel(type: number): string {
  if (type === 3) return '默认 API 版本';
  if (type === 18) return '模型版本';
  if (type === 41) return '部署地区（或 JSON：模型 -> 地区）';
  if (type === 21) return '知识库 ID';
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
  if (!ms) return { color: 'gray', text: '未测试' };
  const text = `${(ms / 1000).toFixed(2)} 秒`;
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
