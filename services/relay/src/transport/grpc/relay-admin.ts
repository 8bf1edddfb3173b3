/**
 * RelayAdminService.TestChannel: a small chat (or embedding) request through the same adaptors
 * that serve traffic. Upstream failures are answers with success=false, not gRPC errors.
 */
import { notFound, type ServiceImpl } from '@aigw/common';
import type { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import { type ChannelIndex, routeChannel } from '../../domain/channel-index.ts';
import { runAttempt } from '../../domain/exchange/attempt.ts';
import { type ClientRequest, canonicalChat } from '../../domain/exchange/build-request.ts';
import { UpstreamFailure } from '../../domain/exchange/failure.ts';
import type { ClientSink, UpstreamClient } from '../../domain/exchange/ports.ts';

function collectSink(): ClientSink & { text(): string } {
  const parts: string[] = [];
  let started = false;
  return {
    aborted: false,
    onAbort: () => () => undefined,
    get started() {
      return started;
    },
    head: () => undefined,
    write(c) {
      started = true;
      parts.push(c.toString());
      return true;
    },
    drain: async () => undefined,
    end(c) {
      started = true;
      if (c) parts.push(c.toString());
    },
    text: () => parts.join(''),
  };
}

export function relayAdminHandlers(deps: {
  upstream: UpstreamClient;
  channels(): ChannelIndex;
}): ServiceImpl<typeof RelayAdminService> {
  return {
    async testChannel(req) {
      const ch = req.channel ? routeChannel(req.channel) : deps.channels().byId(req.channelId);
      if (!ch) {
        if (req.channel)
          return { success: false, timeMs: 0, message: `渠道类型 ${req.channel.type} 暂不支持测试`, statusCode: 0 };
        throw notFound('渠道不存在');
      }
      const models = (req.channel?.models ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const model = req.model || req.channel?.testModel || models[0] || 'gpt-4o-mini';
      const embedding = /embed/i.test(model) && ch.adaptor.modes.has('embeddings');
      const rerank = /rerank/i.test(model) && ch.adaptor.modes.has('rerank');
      const body = embedding
        ? { model, input: 'hi' }
        : rerank
          ? { model, query: 'hi', documents: ['hi'] }
          : { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 };
      const creq: ClientRequest = {
        format: 'openai',
        mode: embedding ? 'embeddings' : rerank ? 'rerank' : 'chat',
        model,
        stream: false,
        body,
        includeUsage: false,
      };
      const sink = collectSink();
      const start = performance.now();
      try {
        await runAttempt({
          req: creq,
          adaptor: ch.adaptor,
          channel: ch.target,
          upstreamModel: ch.modelMapping?.[model] ?? model,
          canonical: () => canonicalChat(creq),
          upstream: deps.upstream,
          sink,
          startedAt: start,
          firstTokenTimeoutMs: 0,
          estimatePrompt: async () => 1,
          countText: async () => 1,
        });
        return {
          success: true,
          timeMs: Math.round(performance.now() - start),
          message: sink.text().slice(0, 200),
          statusCode: 200,
        };
      } catch (err) {
        const timeMs = Math.round(performance.now() - start);
        if (err instanceof UpstreamFailure)
          return { success: false, timeMs, message: err.message, statusCode: err.status };
        return { success: false, timeMs, message: err instanceof Error ? err.message : String(err), statusCode: 0 };
      }
    },
  };
}
