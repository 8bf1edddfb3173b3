/**
 * One attempt of a relayed request on one channel: builds the upstream call, sends it, and
 * writes the answer to the client in the client's format (translated when the channel speaks
 * another protocol). Streams pass through event by event; nothing reaches the client before
 * the first token, so a failure or a first-token timeout before it can still move to another
 * channel.
 */
import type { Adaptor, ChannelTarget } from '../adaptors/index.ts';
import { type ChatRequest, type Json, usageFromOpenAI } from '../protocols/openai.ts';
import { attemptProtocol, clientOf, type Protocol, protocolOf } from '../protocols/registry.ts';
import { buildUpstreamBody, type ClientRequest, overriddenBody } from './build-request.ts';
import { type OverriddenTarget, overrideHeaders, thinkingToContent } from './channel-overrides.ts';
import { UpstreamFailure, upstreamMessage } from './failure.ts';
import { type AttemptResult, abortedResult } from './outcome.ts';
import { type ClientSink, cancelSource, type UpstreamClient, type UpstreamResponse } from './ports.ts';
import { relayStream } from './stream.ts';

export type { AttemptResult } from './outcome.ts';

export interface AttemptInput {
  req: ClientRequest;
  adaptor: Adaptor;
  channel: ChannelTarget;
  upstreamModel: string;
  canonical: () => ChatRequest;
  upstream: UpstreamClient;
  sink: ClientSink;
  /** performance.now() when the relay received the request. */
  startedAt: number;
  /** 0 disables the first-token timeout. */
  firstTokenTimeoutMs: number;
  /** Prompt tokens estimated by the relay (used when the upstream reports none). */
  estimatePrompt: () => Promise<number>;
  /** Tokens of a produced text. */
  countText: (text: string) => Promise<number>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Runs one attempt; throws UpstreamFailure when the upstream fails. */
export async function runAttempt(input: AttemptInput): Promise<AttemptResult> {
  const { req, adaptor, channel, upstreamModel, sink } = input;
  // Providers serving several protocols (Vertex AI) name the one of this model, advanced custom
  // channels the one of their route's converter.
  const wire = attemptProtocol(adaptor, channel, req, upstreamModel);
  const target = adaptor.target(channel, req.mode, upstreamModel, req.stream, wire, req.format);
  const overrides = (channel as OverriddenTarget).overrides;
  // Header operations of the param override (set_header / delete_header).
  const headerEdits: Record<string, string | null> = {};
  let body = overrides
    ? overriddenBody(input, wire, overrides, headerEdits)
    : buildUpstreamBody(req, adaptor, wire, upstreamModel, input.canonical);
  let headers =
    body instanceof FormData
      ? target.headers
      : req.forward && wire === req.format
        ? { ...target.headers, ...JSON_HEADERS, ...req.forward }
        : { ...target.headers, ...JSON_HEADERS };
  if (req.stream) headers.accept = 'text/event-stream';
  if (overrides) headers = overrideHeaders(headers, overrides.headers, headerEdits, channel.key);
  // force_format and thinking_to_content (new-api's, for OpenAI chat answers) re-encode answers
  // through the canonical form even when the channel speaks OpenAI too.
  const setting = overrides?.setting;
  const reshape =
    req.mode === 'chat' && req.format === 'openai' && (setting?.force_format || setting?.thinking_to_content)
      ? { thinkingToContent: setting.thinking_to_content === true }
      : undefined;
  const native = wire === req.format && !reshape;
  let url = target.url;
  const ctx = { channel, mode: req.mode, model: upstreamModel, stream: req.stream, http: input.upstream };
  if (adaptor.prepare) {
    try {
      ({ url, headers, body } = await adaptor.prepare({ url, headers, body }, ctx));
    } catch (err) {
      if (err instanceof UpstreamFailure) throw err;
      throw new UpstreamFailure(
        0,
        `上游请求准备失败: ${err instanceof Error ? err.message : String(err)}`,
        'connection',
      );
    }
  }

  // Streams get their own cancellation (the first-token timeout cancels too); whole answers
  // only follow the client.
  const cancel = req.stream ? cancelSource() : undefined;
  const unlink = cancel ? sink.onAbort(() => cancel.abort()) : undefined;
  try {
    let res: UpstreamResponse;
    try {
      const proxy = setting?.proxy?.trim();
      const call = { url, method: 'POST' as const, headers, body, cancel: cancel ?? sink, ...(proxy ? { proxy } : {}) };
      // Providers with a transport of their own (Spark's WebSocket) send the call themselves.
      res = await (adaptor.send ? adaptor.send(call) : input.upstream.send(call));
    } catch (err) {
      if (sink.aborted) return abortedResult();
      throw new UpstreamFailure(0, `连接上游失败: ${err instanceof Error ? err.message : String(err)}`, 'connection');
    }
    if (res.status < 200 || res.status >= 300) {
      const raw = (await res.bytes().catch(() => Buffer.alloc(0))).toString('utf8');
      throw new UpstreamFailure(res.status, upstreamMessage(raw, res.status));
    }
    const contentType = String(res.headers['content-type'] ?? '');
    const parser = cancel && adaptor.streamParser ? adaptor.streamParser() : undefined;
    if (parser) {
      return await relayStream({ ...input, parser, reshape }, wire, res, cancel as NonNullable<typeof cancel>);
    }
    if (cancel && (contentType.includes('event-stream') || contentType.includes('ndjson'))) {
      return await relayStream({ ...input, reshape }, wire, res, cancel);
    }
    return await relayWhole(input, wire, res, contentType, native, reshape);
  } catch (err) {
    // Adaptors holding credentials drop them when the upstream refused them.
    if (adaptor.onFailure && err instanceof UpstreamFailure) adaptor.onFailure(err, ctx);
    throw err;
  } finally {
    unlink?.();
  }
}

async function relayWhole(
  input: AttemptInput,
  wire: Protocol,
  res: UpstreamResponse,
  contentType: string,
  native: boolean,
  reshape: { thinkingToContent: boolean } | undefined,
): Promise<AttemptResult> {
  const { req, adaptor, sink } = input;
  let bytes: Buffer;
  try {
    bytes = await res.bytes();
  } catch (err) {
    if (sink.aborted) return abortedResult();
    throw new UpstreamFailure(0, `读取上游响应失败: ${err instanceof Error ? err.message : String(err)}`, 'connection');
  }
  const isJson = contentType.includes('json');
  const parse = (): Json => {
    try {
      return JSON.parse(bytes.toString('utf8')) as Json;
    } catch {
      throw new UpstreamFailure(502, '上游返回了无法解析的响应');
    }
  };
  const result: AttemptResult = {
    usage: { promptTokens: 0, completionTokens: 0 },
    estimated: false,
    firstTokenMs: 0,
    aborted: false,
    units: 0,
  };
  // Usage the upstream reported is taken as is; otherwise it is estimated from the texts.
  const estimateUsage = async (text: string) => {
    result.estimated = true;
    result.usage = { promptTokens: await input.estimatePrompt(), completionTokens: await input.countText(text) };
  };

  if (req.mode === 'chat') {
    const json = parse();
    const up = protocolOf(wire);
    if (native) {
      // Same protocol on both sides: the upstream's bytes go out unchanged.
      const usage = up.usage(json);
      if (usage) result.usage = usage;
      else await estimateUsage(up.toCanonical(json, '').choices?.[0]?.message?.content ?? '');
      result.stateId = up.stateId?.(json);
      sink.head(200, JSON_HEADERS);
      sink.end(bytes);
      return result;
    }
    const oa = up.toCanonical(json, input.upstreamModel);
    const usage = up.usage(json, oa);
    if (reshape?.thinkingToContent) thinkingToContent(oa);
    if (usage) result.usage = usage;
    else await estimateUsage(oa.choices?.[0]?.message?.content ?? '');
    if (!oa.usage)
      oa.usage = {
        prompt_tokens: result.usage.promptTokens,
        completion_tokens: result.usage.completionTokens,
        total_tokens: result.usage.promptTokens + result.usage.completionTokens,
      };
    const out = clientOf(req.format).fromCanonical(oa, req.model, result.usage);
    sink.head(200, JSON_HEADERS);
    sink.end(JSON.stringify(out));
    return result;
  }

  const convert = adaptor.convert?.[req.mode];
  if (convert && isJson) {
    const body = req.body instanceof FormData ? {} : req.body;
    const out = convert.response(parse(), body, req.model, await input.estimatePrompt());
    result.usage = out.usage;
    sink.head(200, JSON_HEADERS);
    sink.end(JSON.stringify(out.body));
    return result;
  }
  if (isJson) {
    const json = parse();
    if (req.mode === 'images' || req.mode === 'image_edits' || req.mode === 'image_variations') {
      result.units = Array.isArray(json.data) ? json.data.length : 1;
    }
    const usage = usageFromOpenAI(json.usage);
    const text = req.mode === 'transcriptions' || req.mode === 'translations' ? String(json.text ?? '') : '';
    if (usage) result.usage = usage;
    else await estimateUsage(text);
  } else {
    // Audio bytes (speech) or text transcripts: billed from the input.
    const text = req.mode === 'transcriptions' || req.mode === 'translations' ? bytes.toString('utf8') : '';
    await estimateUsage(text);
  }
  sink.head(200, { 'content-type': contentType || 'application/octet-stream' });
  sink.end(bytes);
  return result;
}
