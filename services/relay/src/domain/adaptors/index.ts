import { advancedCustom } from './advanced-custom.ts';
import { aiproxy } from './aiproxy.ts';
import { anthropic } from './anthropic.ts';
import { azure } from './azure.ts';
import { baidu } from './baidu.ts';
import { baiduV2 } from './baidu-v2.ts';
import { bedrock } from './bedrock.ts';
import { cloudflare } from './cloudflare.ts';
import { cohere } from './cohere.ts';
import { coze } from './coze.ts';
import { dify } from './dify.ts';
import { newApi, sub2api } from './gateways.ts';
import { gemini } from './gemini.ts';
import { hunyuan } from './hunyuan.ts';
import { jina } from './jina.ts';
import { minimax } from './minimax.ts';
import { mokaai } from './mokaai.ts';
import { ollama } from './ollama.ts';
import { openaiCompatible } from './openai-compatible.ts';
import { OPENAI_FAMILY } from './openai-family.ts';
import { palm } from './palm.ts';
import { replicate } from './replicate.ts';
import { spark } from './spark.ts';
import { type Adaptor, RESPONSES_MODES, type RelayMode } from './types.ts';
import { vertex } from './vertex.ts';
import { xinference } from './xinference.ts';

export type { Adaptor, ChannelTarget, Protocol, RelayMode, UpstreamTarget } from './types.ts';

const chatOnly = new Set<RelayMode>(['chat', 'completions', 'embeddings']);

/**
 * Channel type -> adaptor (spec 01 section 3): one file per provider in this folder, its wire
 * protocol found through protocols/registry.ts. Types not listed here are not relayed yet
 * (see services/relay/README.md): 2, 5 (Midjourney, served by the tasks service),
 * 36 (Suno, tasks service).
 */
export const ADAPTORS: Readonly<Record<number, Adaptor>> = {
  1: openaiCompatible('OpenAI', 'https://api.openai.com', '/v1', RESPONSES_MODES, { speaks: new Set(['responses']) }),
  3: azure,
  4: ollama,
  8: openaiCompatible('Custom', ''),
  11: palm,
  14: anthropic,
  15: baidu,
  16: openaiCompatible('ChatGLM', 'https://open.bigmodel.cn', '/api/paas/v4', chatOnly),
  17: openaiCompatible('Qwen', 'https://dashscope.aliyuncs.com', '/compatible-mode/v1', chatOnly),
  18: spark,
  19: openaiCompatible('360', 'https://ai.360.cn', '/v1', chatOnly),
  21: aiproxy,
  24: gemini,
  25: openaiCompatible('Moonshot', 'https://api.moonshot.cn', '/v1', chatOnly),
  26: openaiCompatible('GLM-4V', 'https://open.bigmodel.cn', '/api/paas/v4', chatOnly),
  31: openaiCompatible('Yi', 'https://api.lingyiwanwu.com'),
  34: cohere,
  38: jina,
  39: cloudflare,
  40: openaiCompatible('SiliconCloud', 'https://api.siliconflow.cn'),
  42: openaiCompatible(
    'Mistral',
    'https://api.mistral.ai',
    '/v1',
    new Set<RelayMode>(['chat', 'embeddings', 'moderations']),
    { noStreamOptions: true },
  ),
  23: hunyuan,
  33: bedrock,
  35: minimax,
  37: dify,
  41: vertex,
  44: mokaai,
  46: baiduV2,
  47: xinference,
  49: coze,
  56: replicate,
  58: advancedCustom,
  59: sub2api,
  60: newApi,
  ...OPENAI_FAMILY,
};

/** Channel types the relay cannot serve yet. */
export const UNSUPPORTED_TYPES = [2, 5, 36] as const;

export function adaptorFor(type: number): Adaptor | undefined {
  return ADAPTORS[type];
}
