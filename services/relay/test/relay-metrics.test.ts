/**
 * The relay's own metrics, read from its /metrics as Prometheus scrapes them: request duration by
 * route, model, provider and status class; time to first token and per output token; tokens by
 * type; upstream errors by channel and status; retries; labels bounded (an unknown model is
 * "other", no user or raw path in any label); build_info; the gRPC label that does not clash with
 * Prometheus' own `service`.
 */
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let good: FakeProvider;
let bad: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  good = await startFakeProvider({
    kind: 'openai',
    key: 'k',
    reply: 'one two three four five',
    promptTokens: 12,
    chunkDelayMs: 20,
  });
  bad = await startFakeProvider({ kind: 'openai', key: 'k', status: 500, message: 'upstream exploded' });
});
afterAll(async () => {
  await s?.stop();
  await good?.close();
  await bad?.close();
});

/** The relay's exposition text. */
async function scrape(): Promise<string> {
  return fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`).then((r) => r.text());
}

/** The value of one series: name and every label given must match. */
function value(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
    found = true;
  }
  return found ? total : Number.NaN;
}

function chat(key: string, model: string, stream: boolean) {
  return fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream }),
  });
}

describe('relay metrics', () => {
  it('when whole and streamed answers are served, then duration, tokens and first-token series count them by model and provider', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: good.url, key: 'k', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    for (const stream of [false, false, true, true, true]) {
      const res = await chat(u.key, model, stream);
      expect(res.status).toBe(200);
      await res.text();
    }
    const text = await scrape();
    const labels = { route: '/v1/chat/completions', model, provider: 'openai', status_class: '2xx' };
    expect(value(text, 'relay_request_duration_seconds_count', labels)).toBe(5);
    expect(value(text, 'relay_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(5);
    // The fake reports 12 prompt tokens and one completion token per word (5 words) per request.
    expect(value(text, 'relay_tokens_total', { model, provider: 'openai', type: 'input' })).toBe(60);
    expect(value(text, 'relay_tokens_total', { model, provider: 'openai', type: 'output' })).toBe(25);
    expect(value(text, 'relay_time_to_first_token_seconds_count', { model, provider: 'openai' })).toBe(3);
    expect(value(text, 'relay_time_per_output_token_seconds_count', { model, provider: 'openai' })).toBe(3);
    // Words 20 ms apart: about 20 ms per output token after the first.
    const perToken =
      value(text, 'relay_time_per_output_token_seconds_sum', { model, provider: 'openai' }) /
      value(text, 'relay_time_per_output_token_seconds_count', { model, provider: 'openai' });
    expect(perToken).toBeGreaterThan(0.01);
    expect(perToken).toBeLessThan(0.5);
    expect(value(text, 'relay_in_flight_requests', {})).toBe(0);
    expect(value(text, 'relay_open_streams', {})).toBe(0);
    // The first request of a user pre-consumes (no balance seen yet): timed.
    expect(value(text, 'relay_preconsume_duration_seconds_count', {})).toBeGreaterThanOrEqual(1);
    // The old unlabelled histogram is gone.
    expect(text).not.toContain('relay_first_token_seconds');
  });

  it('when a channel fails and the request moves to another, then the upstream error and the retry are counted', async () => {
    const model = modelName('gpt-4o');
    const u = await userWithToken(s);
    await setOption(s, 'RetryTimes', '1');
    const badId = await createChannel(s, {
      type: 1,
      baseUrl: bad.url,
      key: 'k',
      models: model,
      priority: 10,
      autoBan: 0,
    });
    await createChannel(s, { type: 1, baseUrl: good.url, key: 'k', models: model, priority: 0 });
    await routable(s.stack.relayUrl, u.key, model);
    const before = await scrape();
    const errors0 = value(before, 'relay_upstream_errors_total', { channel: String(badId), status: '500' }) || 0;
    const retries0 = value(before, 'relay_retries_total', {}) || 0;
    const res = await chat(u.key, model, false);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
      'one two three four five',
    );
    const after = await scrape();
    expect(value(after, 'relay_upstream_errors_total', { channel: String(badId), status: '500' })).toBe(errors0 + 1);
    expect(value(after, 'relay_retries_total', {})).toBe(retries0 + 1);
    await setOption(s, 'RetryTimes', '0');
  });

  it('when requests name models nobody configured or fail before any channel, then labels stay bounded', async () => {
    const u = await userWithToken(s);
    const made = `made-up-${Date.now()}`;
    const res = await chat(u.key, made, false);
    expect(res.status).toBeGreaterThanOrEqual(400);
    const refused = `${String(res.status)[0]}xx`;
    await res.text();
    const unauth = await chat('sk-not-a-real-key', made, false);
    expect(unauth.status).toBe(401);
    await unauth.text();
    const text = await scrape();
    expect(text).not.toContain(made);
    expect(text).not.toContain(u.username);
    expect(
      value(text, 'relay_request_duration_seconds_count', {
        route: '/v1/chat/completions',
        model: 'other',
        provider: 'none',
        status_class: refused,
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'relay_request_duration_seconds_count', {
        route: '/v1/chat/completions',
        model: 'other',
        status_class: '4xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    // A Gemini path names its model in the URL: the route label keeps the pattern, not the path.
    const g = await fetch(`${s.stack.relayUrl}/v1beta/models/${made}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': u.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    await g.text();
    const after = await scrape();
    expect(after).not.toContain(made);
    expect(
      value(after, 'relay_request_duration_seconds_count', { route: '/v1beta/models/{model}:generateContent' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('when a channel answers 401 with auto-disable on, then it is counted as auto-disabled; settles report their delay', async () => {
    await setOption(s, 'AutomaticDisableChannelEnabled', 'true');
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const id = await createChannel(s, { type: 1, baseUrl: good.url, key: 'wrong-key', models: model, autoBan: 1 });
    await routable(s.stack.relayUrl, u.key, model);
    const res = await chat(u.key, model, false);
    expect(res.status).toBe(401);
    await res.text();
    const text = await eventually(
      scrape,
      (t) => value(t, 'channels_auto_disabled_total', { channel: String(id) }) === 1,
    );
    expect(value(text, 'channels_auto_disabled_total', { channel: String(id) })).toBe(1);
    expect((await s.channels.getChannel({ id })).channel?.status).toBe(3);
    await setOption(s, 'AutomaticDisableChannelEnabled', 'false');
    // Billing settled the earlier requests from their usage events, each with its delay.
    expect(value(text, 'billing_settle_delay_seconds_count', {})).toBeGreaterThanOrEqual(6);
  });

  it('when scraped, then build_info names the service and gRPC series use grpc_service, not service', async () => {
    const text = await scrape();
    expect(value(text, 'build_info', { service: 'relay', node_version: process.version })).toBe(1);
    const grpc = text.split('\n').filter((l) => l.startsWith('grpc_server_handled_total{'));
    expect(grpc.length).toBeGreaterThan(0);
    for (const line of grpc) {
      expect(line).toContain('grpc_service="');
      expect(line).not.toMatch(/[{,]service="/);
    }
  });
});
