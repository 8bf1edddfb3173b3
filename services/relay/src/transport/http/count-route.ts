/**
 * Token counts without running the request, free: Claude's POST /v1/messages/count_tokens,
 * Gemini's POST /{v1beta,v1}/models/{model}:countTokens and the Responses API's
 * /v1/responses/input_tokens. Counted by a channel of the same protocol, estimated on the others.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkModel } from '../../domain/authorize.ts';
import { countTokens } from '../../domain/count-tokens.ts';
import { tokenCaller } from './api-route.ts';
import { parseClientRequest } from './request-body.ts';
import { newRequestId, type RouteContext } from './route-kit.ts';

export async function handleCount(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  format: 'claude' | 'gemini' | 'responses',
  route: string,
  gemini?: { model: string },
) {
  const { deps, identify, fail } = ctx;
  const requestId = newRequestId();
  const began = performance.now();
  try {
    const who = identify(req, format, url);
    // The count schemas require the model and the prompt (messages, contents, or the contents of
    // Gemini's whole `generateContentRequest`) with each API's own message.
    const parsing = parseClientRequest(
      req,
      'chat',
      format,
      deps,
      gemini ? { model: gemini.model, stream: false } : undefined,
      { count: true },
    );
    const [id, creq] = who instanceof Promise ? await Promise.all([who, parsing]) : [who, await parsing];
    checkModel(id.token, creq.model);
    const caller = tokenCaller(ctx, req, id, creq.model, requestId, performance.now());
    const answer = await countTokens(deps.pipeline, caller, creq);
    const text = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(JSON.stringify(answer.body));
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': String(text.length),
      'x-aigw-request-id': requestId,
      ...(answer.estimated ? { 'x-aigw-estimated': 'true' } : {}),
    });
    res.end(text);
  } catch (err) {
    fail(res, format, err, requestId, 'chat', { route, model: 'other', startedAt: began });
  }
}
