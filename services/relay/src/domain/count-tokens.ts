/**
 * Counting a request's input tokens without running it (Claude's /v1/messages/count_tokens,
 * Gemini's models/{model}:countTokens, OpenAI's /v1/responses/input_tokens): asked of the upstream
 * when the channel counts natively in the client's protocol, estimated by the relay's tokenizer
 * otherwise. Free: nothing is reserved or billed.
 */
import type { ClientRequest } from './exchange/build-request.ts';
import { upstreamMessage } from './exchange/failure.ts';
import type { Json } from './protocols/openai.ts';
import { attemptProtocol, clientOf } from './protocols/registry.ts';
import { RelayError } from './relay-error.ts';
import type { RelayCaller, RelayDeps } from './relay-request.ts';
import { chatPromptParts } from './token-estimate.ts';

/** The answer to give: a status and a JSON body (already the client format's). */
export interface CountAnswer {
  status: number;
  body: Json | Buffer;
  /** True when the relay estimated the count (no channel counts natively). */
  estimated: boolean;
}

/** How long an explicit count waits for the tokenizer before it estimates. */
const EXPLICIT_COUNT_WAIT_MS = 2_000;

export async function countTokens(
  deps: Pick<RelayDeps, 'channels' | 'upstream' | 'tokenizer'>,
  caller: RelayCaller,
  req: ClientRequest,
): Promise<CountAnswer> {
  const index = deps.channels();
  const ch = caller.pinnedChannelId ? index.byId(caller.pinnedChannelId) : index.select(caller.group, req.model, 0, []);
  if (!ch) throw new RelayError(503, `当前分组 ${caller.group} 下对于模型 ${req.model} 无可用渠道`, 'model_not_found');
  const body = req.body as Json;
  const upstreamModel = ch.modelMapping?.[req.model] ?? req.model;
  const client = clientOf(req.format);

  // The Responses API counts at {its URL}/input_tokens on the channels that serve it.
  const responses =
    req.format === 'responses' &&
    ch.adaptor.speaks?.has('responses') &&
    attemptProtocol(ch.adaptor, ch.target, req, upstreamModel) === 'responses'
      ? ch.adaptor.target(ch.target, 'chat', upstreamModel, false, 'responses')
      : undefined;
  const responsesCount = responses && { url: `${responses.url}/input_tokens`, headers: responses.headers };
  if (responsesCount || (ch.adaptor.countTarget && ch.adaptor.protocol === req.format)) {
    const target =
      responsesCount ??
      (ch.adaptor.countTarget as NonNullable<typeof ch.adaptor.countTarget>)(ch.target, upstreamModel);
    // Gemini names the model in the URL; Claude in the body.
    const payload =
      req.format === 'gemini'
        ? (req.raw ?? JSON.stringify(body))
        : req.raw && upstreamModel === req.model
          ? req.raw
          : JSON.stringify({ ...body, model: upstreamModel });
    let status: number;
    let bytes: Buffer;
    try {
      const res = await deps.upstream.send({
        url: target.url,
        method: 'POST',
        headers: { ...target.headers, 'content-type': 'application/json', ...req.forward },
        body: payload,
      });
      status = res.status;
      bytes = await res.bytes();
    } catch (err) {
      const message = `连接上游失败: ${err instanceof Error ? err.message : String(err)}`;
      return { status: 502, body: client.error(502, message), estimated: false };
    }
    if (status >= 200 && status < 300) return { status, body: bytes, estimated: false };
    // The provider's message in the client's error shape (a 401 of the channel's key is not the caller's).
    const shown = status === 401 || status === 403 ? 502 : status;
    return {
      status: shown,
      body: client.error(shown, upstreamMessage(bytes.toString('utf8'), status)),
      estimated: false,
    };
  }

  // A Gemini count may wrap the request it counts.
  const counted = req.format === 'gemini' && body.generateContentRequest ? (body.generateContentRequest as Json) : body;
  const { texts, fixed } = chatPromptParts(client.canonical(counted, req.model, false));
  // The count is all this request asks for: wait for the exact one (a loaded machine answered
  // the cheap estimate after the pre-consume's 50 ms, 156 for a prompt of 200 tokens).
  const n = fixed + (await deps.tokenizer.count(texts, req.model, { waitMs: EXPLICIT_COUNT_WAIT_MS }));
  const answer =
    req.format === 'gemini'
      ? { totalTokens: n }
      : req.format === 'responses'
        ? { object: 'response.input_tokens', input_tokens: n }
        : { input_tokens: n };
  return { status: 200, body: answer, estimated: true };
}
