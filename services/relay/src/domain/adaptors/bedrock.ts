/**
 * AWS Claude (type 33): Anthropic's models on Amazon Bedrock. The key is `Ak|Sk|Region` (spec 01
 * section 5); requests are the Messages API body with `anthropic_version: bedrock-2023-05-31` in
 * place of `model` and `stream`, POSTed to `/model/{id}/invoke` (or `invoke-with-response-stream`)
 * and signed with SigV4 (service `bedrock`). Streamed answers are AWS event-stream messages whose
 * payload carries each Claude stream event base64-encoded; they are turned back into SSE events so
 * the Claude protocol module reads them like Anthropic's own.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import type { Json } from '../protocols/openai.ts';
import type { SseEvent } from '../protocols/sse.ts';
import { createEventStreamDecoder } from './aws-eventstream.ts';
import { type AwsCredentials, signSigV4 } from './aws-sigv4.ts';
import type { Adaptor, RelayMode } from './types.ts';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export interface AwsKey {
  credentials: AwsCredentials;
  region: string;
}

/** Reads `Ak|Sk|Region` (an optional fourth part is an STS session token). */
export function parseAwsKey(key: string): AwsKey {
  const [ak = '', sk = '', region = '', token = ''] = key.split('|').map((p) => p.trim());
  if (!ak || !sk || !region) throw new Error('AWS 渠道密钥格式应为 Ak|Sk|Region');
  return { credentials: { accessKeyId: ak, secretAccessKey: sk, ...(token ? { sessionToken: token } : {}) }, region };
}

/** Bedrock's ids of Anthropic's models (the version suffix is Bedrock's own). */
const MODEL_IDS: Record<string, string> = {
  'claude-3-haiku-20240307': 'anthropic.claude-3-haiku-20240307-v1:0',
  'claude-3-sonnet-20240229': 'anthropic.claude-3-sonnet-20240229-v1:0',
  'claude-3-opus-20240229': 'anthropic.claude-3-opus-20240229-v1:0',
  'claude-3-5-sonnet-20240620': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-haiku-20241022': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-7-sonnet-20250219': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-sonnet-4-20250514': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-opus-4-20250514': 'anthropic.claude-opus-4-20250514-v1:0',
};

/** The Bedrock model id of a model name; ids already in Bedrock's form pass unchanged. */
export function bedrockModelId(model: string): string {
  return MODEL_IDS[model] ?? model;
}

/** The runtime URL; `base` replaces `https://bedrock-runtime.{region}.amazonaws.com` when set. */
export function bedrockUrl(base: string, region: string, model: string, stream: boolean): string {
  const origin = base.replace(/\/+$/, '') || `https://bedrock-runtime.${region}.amazonaws.com`;
  const action = stream ? 'invoke-with-response-stream' : 'invoke';
  return `${origin}/model/${encodeURIComponent(bedrockModelId(model))}/${action}`;
}

/** A Messages API body as Bedrock takes it. */
export function toBedrockBody(claude: Json): Json {
  const { model: _model, stream: _stream, ...rest } = claude;
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
}

/** Signed headers of one Bedrock call. */
export function signBedrock(
  key: AwsKey,
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  now?: Date,
): Promise<Record<string, string>> {
  return signSigV4({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body,
    region: key.region,
    service: 'bedrock',
    credentials: key.credentials,
    ...(now ? { now } : {}),
  });
}

/** An exception the stream carried (throttling, validation, model errors) with its HTTP status. */
export class BedrockStreamError extends UpstreamFailure {
  constructor(
    readonly exceptionType: string,
    status: number,
    message: string,
  ) {
    super(status, message, 'stream');
    this.name = 'BedrockStreamError';
  }
}

const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  modelTimeoutException: 408,
  validationException: 400,
  modelStreamErrorException: 424,
  internalServerException: 500,
};

/**
 * Turns the event-stream bytes of InvokeModelWithResponseStream into the Claude SSE events they
 * carry; an exception message throws BedrockStreamError.
 */
export function bedrockStreamParser(): { push(chunk: Uint8Array): SseEvent[]; end(): SseEvent[] } {
  const decoder = createEventStreamDecoder();
  return {
    push(chunk) {
      const out: SseEvent[] = [];
      for (const msg of decoder.push(chunk)) {
        const kind = String(msg.headers[':message-type'] ?? 'event');
        const text = msg.payload.toString('utf8');
        if (kind !== 'event') {
          const type = String(
            msg.headers[':exception-type'] ?? msg.headers[':error-code'] ?? 'internalServerException',
          );
          let message = text;
          try {
            message = String((JSON.parse(text) as { message?: string }).message ?? text);
          } catch {
            // not JSON: the payload text is the message
          }
          throw new BedrockStreamError(type, EXCEPTION_STATUS[type] ?? 500, message);
        }
        if (msg.headers[':event-type'] !== 'chunk') continue;
        const bytes = (JSON.parse(text) as { bytes?: string }).bytes;
        if (!bytes) continue;
        const data = Buffer.from(bytes, 'base64').toString('utf8');
        const type = (JSON.parse(data) as { type?: string }).type ?? '';
        out.push({ event: type, data });
      }
      return out;
    },
    end() {
      decoder.end();
      return [];
    },
  };
}

/** AWS Claude (type 33). */
export const bedrock: Adaptor = {
  name: 'AWS Claude',
  protocol: 'claude',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: '',
  // The address depends on the key's region: prepare() builds it.
  target: () => ({ url: '', headers: {} }),
  async prepare(call, ctx) {
    let key: AwsKey;
    try {
      key = parseAwsKey(ctx.channel.key);
    } catch (err) {
      throw new UpstreamFailure(401, (err as Error).message);
    }
    const url = bedrockUrl(ctx.channel.baseUrl, key.region, ctx.model, ctx.stream);
    const body = JSON.stringify(toBedrockBody(JSON.parse(String(call.body)) as Json));
    const accept = ctx.stream ? 'application/vnd.amazon.eventstream' : 'application/json';
    return { url, headers: await signBedrock(key, url, body, { accept }), body };
  },
  streamParser: bedrockStreamParser,
};
