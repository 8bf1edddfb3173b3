/**
 * Streams an upstream answer to the client event by event. Events are held back only until the
 * first token (so that a failure or a first-token timeout before it can still fail over), then
 * written as they arrive, with socket backpressure respected. Usage comes from the stream; when
 * the upstream sends none, it is estimated from what was produced.
 */
import { claudeStreamToOpenAI, openaiStreamToClaude, tallyClaudeEvent } from '../protocols/claude.ts';
import { cohereStreamToOpenAI } from '../protocols/cohere.ts';
import { geminiStreamToOpenAI, openaiStreamToGemini, tallyGeminiEvent } from '../protocols/gemini.ts';
import { ollamaStreamToOpenAI } from '../protocols/ollama.ts';
import {
  type ChatChunk,
  type StreamTally,
  tallyChunk,
  tallyText,
  type Usage,
  usageToOpenAI,
} from '../protocols/openai.ts';
import { createNdjsonParser, createSseParser, type SseEvent, sse } from '../protocols/sse.ts';
import { estimateFromTally } from '../token-estimate.ts';
import type { AttemptInput, AttemptResult } from './attempt.ts';
import { errorBody } from './attempt.ts';
import { UpstreamFailure } from './failure.ts';
import type { UpstreamResponse } from './ports.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

interface Encoder {
  /** Handles one upstream event; returns the client text and whether it carried a token. */
  event(ev: SseEvent | unknown): { out: string; produced: boolean };
  /** Closing text once the upstream ended (usage known by then). */
  end(usage: Usage): string;
}

export async function relayStream(
  input: AttemptInput,
  res: UpstreamResponse,
  cancel: { abort(): void },
): Promise<AttemptResult> {
  const { req, sink } = input;
  const tally: StreamTally = { chars: 0, wideChars: 0 };
  const encoder = createEncoder(input, tally);
  const ndjson = input.adaptor.protocol === 'ollama';
  const parser: { push(chunk: Uint8Array): unknown[]; end(): unknown[] } = ndjson
    ? createNdjsonParser()
    : createSseParser();

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
    if (failure) tail += clientStreamError(req.format, failure.message);
    tail += encoder.end(usage);
    sink.end(tail);
  }
  return { usage, estimated, firstTokenMs, aborted, units: 0 };
}

function clientStreamError(format: 'openai' | 'claude' | 'gemini', message: string): string {
  const body = JSON.stringify(errorBody(format, 500, message));
  return format === 'claude' ? sse(body, 'error') : sse(body);
}

/** Picks the encoder for (upstream protocol, client format). */
function createEncoder(input: AttemptInput, tally: StreamTally): Encoder {
  const { req, adaptor } = input;
  const p = adaptor.protocol;
  const model = req.model;

  if (p === req.format && p === 'openai') return openaiPassthrough(input, tally);
  if (p === req.format && p === 'claude') {
    return {
      event: (e) => {
        const ev = e as SseEvent;
        const produced = tallyClaudeEvent(tally, ev);
        return { out: ev.event ? sse(ev.data, ev.event) : sse(ev.data), produced };
      },
      end: () => '',
    };
  }
  if (p === req.format && p === 'gemini') {
    return {
      event: (e) => {
        const ev = e as SseEvent;
        const produced = tallyGeminiEvent(tally, ev);
        return { out: sse(ev.data), produced };
      },
      end: () => '',
    };
  }

  // Translated: upstream protocol -> OpenAI chunks -> client format.
  const decode: (item: unknown) => ChatChunk[] =
    p === 'claude'
      ? (
          (d) => (e: unknown) =>
            d.onEvent(e as SseEvent)
        )(claudeStreamToOpenAI(input.upstreamModel))
      : p === 'gemini'
        ? (
            (d) => (e: unknown) =>
              d.onEvent(e as SseEvent)
          )(geminiStreamToOpenAI(input.upstreamModel))
        : p === 'ollama'
          ? (
              (d) => (e: unknown) =>
                d.onLine(e)
            )(ollamaStreamToOpenAI(input.upstreamModel))
          : p === 'cohere'
            ? (
                (d) => (e: unknown) =>
                  d.onEvent(e as SseEvent)
              )(cohereStreamToOpenAI(input.upstreamModel))
            : (e: unknown) => {
                const ev = e as SseEvent;
                return ev.data && ev.data !== '[DONE]' ? [JSON.parse(ev.data) as ChatChunk] : [];
              };

  if (req.format === 'openai') {
    return {
      event: (e) => {
        let out = '';
        let produced = false;
        for (const c of decode(e)) {
          if (tallyChunk(tally, c)) produced = true;
          if (c.usage !== undefined) delete c.usage;
          if (c.choices.length === 0) continue;
          c.model = model;
          out += sse(JSON.stringify(c));
        }
        return { out, produced };
      },
      end: (usage) => {
        let out = '';
        if (req.includeUsage) {
          out += sse(
            JSON.stringify({
              id: tally.id ?? 'chatcmpl-relay',
              object: 'chat.completion.chunk',
              created: Math.floor(Date.now() / 1000),
              model,
              choices: [],
              usage: usageToOpenAI(usage),
            }),
          );
        }
        return `${out}data: [DONE]\n\n`;
      },
    };
  }
  const encode = req.format === 'claude' ? openaiStreamToClaude(model, 0) : openaiStreamToGemini(model);
  return {
    event: (e) => {
      let out = '';
      let produced = false;
      for (const c of decode(e)) {
        if (tallyChunk(tally, c)) produced = true;
        out += encode.onChunk(c);
      }
      return { out, produced };
    },
    end: (usage) => encode.end(usage),
  };
}

/** OpenAI upstream to OpenAI client: events go out as they came, minus the usage chunk the relay asked for. */
function openaiPassthrough(input: AttemptInput, tally: StreamTally): Encoder {
  const { req } = input;
  let done = false;
  return {
    event: (e) => {
      const ev = e as SseEvent;
      if (!ev.data) return { out: '', produced: false };
      if (ev.data === '[DONE]') {
        done = true;
        return { out: 'data: [DONE]\n\n', produced: false };
      }
      let c: ChatChunk & { choices: { text?: string }[] };
      try {
        c = JSON.parse(ev.data);
      } catch {
        return { out: sse(ev.data), produced: false };
      }
      if ((c as unknown as { error?: unknown }).error)
        throw new UpstreamFailure(500, JSON.stringify((c as unknown as { error: unknown }).error));
      let produced = tallyChunk(tally, c);
      if (req.mode === 'completions') {
        for (const ch of c.choices ?? []) {
          if (ch.text) {
            tallyText(tally, ch.text);
            produced = true;
          }
        }
      }
      // The usage-only chunk the relay asked for on the client's behalf stays with the relay.
      if (!req.includeUsage && c.usage && (c.choices?.length ?? 0) === 0) return { out: '', produced };
      return { out: `data: ${ev.data}\n\n`, produced };
    },
    end: () => (done ? '' : 'data: [DONE]\n\n'),
  };
}
