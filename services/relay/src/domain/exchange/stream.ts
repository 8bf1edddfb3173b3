/**
 * Streams an upstream answer to the client event by event. Events are held back only until the
 * first token (so that a failure or a first-token timeout before it can still fail over), then
 * written as they arrive, with socket backpressure respected. Usage comes from the stream; when
 * the upstream sends none, it is estimated from what was produced.
 */
import { type ChatChunk, type StreamTally, tallyChunk } from '../protocols/openai.ts';
import { clientOf, type Protocol, protocolOf } from '../protocols/registry.ts';
import { createNdjsonParser, createSseParser } from '../protocols/sse.ts';
import type { ChunkEncoder, StreamContext, StreamEncoder } from '../protocols/wire.ts';
import { estimateFromTally } from '../token-estimate.ts';
import type { ClientRequest } from './build-request.ts';
import { thinkingToContentStream } from './channel-overrides.ts';
import { UpstreamFailure } from './failure.ts';
import type { AttemptResult } from './outcome.ts';
import type { ClientSink, UpstreamResponse } from './ports.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** What a streamed attempt needs of its input (attempt.ts). */
export interface StreamInput {
  req: ClientRequest;
  upstreamModel: string;
  sink: ClientSink;
  /** performance.now() when the relay received the request. */
  startedAt: number;
  /** 0 disables the first-token timeout. */
  firstTokenTimeoutMs: number;
  estimatePrompt: () => Promise<number>;
  /** The provider's own framing (Adaptor.streamParser), else the protocol's SSE or NDJSON. */
  parser?: { push(chunk: Uint8Array): unknown[]; end(): unknown[] } | undefined;
  /** The channel's force_format / thinking_to_content: re-encoded even between equal protocols. */
  reshape?: { thinkingToContent: boolean } | undefined;
}

export async function relayStream(
  input: StreamInput,
  wire: Protocol,
  res: UpstreamResponse,
  cancel: { abort(): void },
): Promise<AttemptResult> {
  const { req, sink } = input;
  const tally: StreamTally = { chars: 0, wideChars: 0 };
  const up = protocolOf(wire);
  const client = clientOf(req.format);
  const ctx: StreamContext = { mode: req.mode, model: req.model, includeUsage: req.includeUsage };
  // Same protocol on both sides: events pass through; else upstream -> canonical chunks -> client.
  const reshape = input.reshape?.thinkingToContent ? thinkingToContentStream() : undefined;
  const encoder =
    wire === req.format && !input.reshape
      ? client.passthroughStream(ctx, tally)
      : translated(up.streamDecoder(input.upstreamModel), client.chunkEncoder(ctx, tally), tally, reshape);
  const parser: { push(chunk: Uint8Array): unknown[]; end(): unknown[] } =
    input.parser ?? (up.framing === 'ndjson' ? createNdjsonParser() : createSseParser());

  let committed = false;
  let held = '';
  let firstTokenMs = 0;
  let timedOut = false;
  const timer =
    input.firstTokenTimeoutMs > 0
      ? setTimeout(() => {
          if (!committed) {
            timedOut = true;
            cancel.abort();
          }
        }, input.firstTokenTimeoutMs)
      : undefined;

  const commit = () => {
    committed = true;
    if (timer) clearTimeout(timer);
    sink.head(200, SSE_HEADERS);
  };
  // The events of one upstream read go out in one write (one syscall, not one per event).
  const handle = async (items: unknown[]) => {
    let out = '';
    for (const item of items) {
      const ev = encoder.event(item);
      if (committed) out += ev.out;
      else {
        held += ev.out;
        if (!ev.produced) continue;
        firstTokenMs = Math.round(performance.now() - input.startedAt);
        commit();
        out = held;
        held = '';
      }
    }
    if (out && !sink.write(out)) await sink.drain();
  };

  let failure: UpstreamFailure | undefined;
  try {
    for await (const bytes of res.body) {
      const items = parser.push(bytes);
      if (items.length > 0) await handle(items);
    }
    await handle(parser.end());
  } catch (err) {
    if (timer) clearTimeout(timer);
    if (timedOut) throw new UpstreamFailure(0, `首字超时（${input.firstTokenTimeoutMs} ms）`, 'first_token_timeout');
    if (!sink.aborted) {
      const message = err instanceof Error ? err.message : String(err);
      if (!committed)
        throw new UpstreamFailure(err instanceof UpstreamFailure ? err.status : 0, `上游流中断: ${message}`, 'stream');
      failure = new UpstreamFailure(0, `上游流中断: ${message}`, 'stream', true);
    }
  } finally {
    if (timer) clearTimeout(timer);
  }

  const aborted = sink.aborted;
  let estimated = false;
  let usage = tally.usage;
  if (!usage || (aborted && usage.completionTokens === 0)) {
    estimated = true;
    usage = {
      promptTokens: usage?.promptTokens || (await input.estimatePrompt()),
      completionTokens: estimateFromTally(tally.chars, tally.wideChars),
    };
  }
  if (!aborted) {
    if (!committed) commit();
    let tail = held;
    if (failure) tail += client.streamError(failure.message);
    tail += encoder.end(usage);
    sink.end(tail);
  }
  return { usage, estimated, firstTokenMs, aborted, units: 0, stateId: tally.stateId };
}

/** A translated stream: each upstream item decoded to canonical chunks, each encoded for the client. */
function translated(
  decode: (item: unknown) => ChatChunk[],
  encode: ChunkEncoder,
  tally: StreamTally,
  reshape?: (chunk: ChatChunk) => ChatChunk,
): StreamEncoder {
  return {
    event: (e) => {
      let out = '';
      let produced = false;
      for (const decoded of decode(e)) {
        const c = reshape ? reshape(decoded) : decoded;
        if (tallyChunk(tally, c)) produced = true;
        out += encode.onChunk(c);
      }
      return { out, produced };
    },
    end: (usage) => encode.end(usage),
  };
}
