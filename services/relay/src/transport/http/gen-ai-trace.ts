/**
 * The upstream call as an OpenTelemetry CLIENT span with the GenAI semantic conventions
 * (gen_ai.operation.name, gen_ai.provider.name, request and response model, token usage, finish
 * reasons), named `chat gpt-4o-mini`, carrying `traceparent` to the provider. Built per request
 * around the pipeline's ports (upstream, health, usage) only while this process exports traces:
 * the hot path is unchanged otherwise.
 */
import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@aigw/common/telemetry';
import { LogType } from '@aigw/proto/common/v1/common';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { UpstreamClient, UpstreamResponse } from '../../domain/exchange/ports.ts';
import type { HealthRecord, RelayDeps, UsageRecord } from '../../domain/relay-request.ts';
import { providerOf } from './metrics.ts';

/** gen_ai.operation.name of each relay mode (OpenTelemetry's names where it has one). */
const OPERATIONS: Record<RelayMode, string> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  images: 'generate_content',
  image_edits: 'generate_content',
  image_variations: 'generate_content',
  speech: 'generate_content',
  transcriptions: 'generate_content',
  translations: 'generate_content',
  moderations: 'moderation',
  rerank: 'rerank',
  responses_compact: 'chat',
};

/** The finish reason and model fields of every protocol the relay speaks (OpenAI, Claude, Gemini, Ollama, Cohere). */
const FINISH = /"(?:finish_reason|stop_reason|finishReason|done_reason)"\s*:\s*"([A-Za-z_]{1,40})"/g;
const MODEL = /"(?:model|modelVersion)"\s*:\s*"([^"\\]{1,200})"/;

/** Watches an upstream answer go by for its model and finish reasons (no copy, no parse of the whole body). */
class AnswerTap {
  model: string | undefined;
  readonly reasons = new Set<string>();
  private tail = '';

  see(chunk: Uint8Array): void {
    const text = this.tail + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
    if (this.model === undefined) this.model = MODEL.exec(text)?.[1];
    for (const m of text.matchAll(FINISH)) if (m[1]) this.reasons.add(m[1]);
    // A field cut between two chunks is found in the next one.
    this.tail = text.slice(-80);
  }

  wrap(res: UpstreamResponse): UpstreamResponse {
    const body = res.body;
    return {
      status: res.status,
      headers: res.headers,
      body: {
        [Symbol.asyncIterator]: () => {
          const it = body[Symbol.asyncIterator]();
          return {
            next: async () => {
              const r = await it.next();
              if (!r.done) this.see(r.value);
              return r;
            },
            return: async (v?: unknown) => it.return?.(v) ?? { done: true as const, value: undefined },
          };
        },
      },
      bytes: async () => {
        const b = await res.bytes();
        if (res.status >= 200 && res.status < 300) this.see(b);
        return b;
      },
    };
  }
}

/**
 * The pipeline's ports for one request, with the upstream attempt traced. Each attempt opens a
 * span in send(); the failed attempt's health record or the request's usage record closes it.
 */
export function tracedPipeline(deps: RelayDeps, req: ClientRequest): RelayDeps {
  const operation = OPERATIONS[req.mode] ?? req.mode;
  const tracer = trace.getTracer('aigw-relay');
  let span: Span | undefined;
  let tap: AnswerTap | undefined;

  const upstream: UpstreamClient = {
    async send(call) {
      span?.end();
      const url = new URL(call.url);
      const parent = context.active();
      span = tracer.startSpan(
        `${operation} ${req.model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': operation,
            'gen_ai.request.model': req.model,
            'server.address': url.hostname,
            'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
            'http.request.method': call.method,
            ...(req.stream ? { 'gen_ai.request.stream': true } : {}),
          },
        },
        parent,
      );
      tap = new AnswerTap();
      const headers = { ...call.headers };
      propagation.inject(trace.setSpan(parent, span), headers);
      try {
        const res = await deps.upstream.send({ ...call, headers });
        span.setAttribute('http.response.status_code', res.status);
        return tap.wrap(res);
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        throw err;
      }
    },
  };

  /** Closes the attempt's span with what the relay learnt of it. */
  const close = (
    rec: UsageRecord | HealthRecord,
    model: string,
    failed: { type: string; message: string } | undefined,
  ) => {
    const s = span;
    if (!s) return;
    span = undefined;
    const type = rec.channelId ? deps.channels().byId(rec.channelId)?.type : undefined;
    const provider = providerOf(type);
    s.setAttributes({
      'gen_ai.provider.name': provider,
      'gen_ai.system': provider,
      'gen_ai.request.model': model,
      'aigw.channel.id': rec.channelId,
    });
    s.updateName(`${operation} ${model}`);
    if (tap?.model) s.setAttribute('gen_ai.response.model', tap.model);
    if (tap && tap.reasons.size > 0) s.setAttribute('gen_ai.response.finish_reasons', [...tap.reasons]);
    if (failed !== undefined) {
      s.setAttribute('error.type', failed.type);
      s.setStatus({ code: SpanStatusCode.ERROR, message: failed.message.slice(0, 200) });
    }
    s.end();
  };

  return {
    ...deps,
    upstream,
    health(rec) {
      close(rec, rec.model, { type: String(rec.statusCode || 'connection'), message: rec.message });
      deps.health(rec);
    },
    usage(rec) {
      if (span) {
        const s = span;
        if (rec.type === LogType.CONSUME) {
          s.setAttributes({
            'gen_ai.usage.input_tokens': rec.usage.promptTokens,
            'gen_ai.usage.output_tokens': rec.usage.completionTokens,
          });
          if (rec.firstTokenMs) s.setAttribute('aigw.time_to_first_token_ms', rec.firstTokenMs);
        }
        close(
          rec,
          rec.upstreamModel,
          rec.type === LogType.CONSUME ? undefined : { type: String(rec.statusCode), message: rec.errorMessage },
        );
      }
      deps.usage(rec);
    },
  };
}
