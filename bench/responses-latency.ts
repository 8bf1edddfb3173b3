/**
 * The relay's added latency on a streamed Responses API call (a script, not a test): passed
 * through to an OpenAI channel next to translated for a Claude channel (Responses -> Messages and
 * the typed Responses events back), each against the same fake upstream called directly. Time to
 * the first event and to the end of the stream; the relay's added latency is the relay's figure
 * minus the direct one. One request at a time, the four targets in turn (machine noise lands on
 * all four alike). The whole local stack (users, channels, billing, logs, relay, gateway: real
 * services, real Kafka, Redis and MongoDB-compatible server), fakes speaking each provider's wire
 * format.
 *
 *   bash deploy/local/bin/infra.sh up
 *   set -a; . <(bash deploy/local/bin/infra.sh up | grep -E '^(MONGO_URL|KAFKA_BROKERS|REDIS_URL)='); set +a
 *   npx tsx bench/responses-latency.ts [--n=300]
 */
import { startFakeProvider } from '@aigw/testkit/fakes';
import { createChannel, modelName, routable, startRelayStack, userWithToken } from '@aigw/testkit/harness';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 300);
const WARMUP = 30;
/** The fakes send a text delta every 2 ms: 60 of them, so the whole stream takes about 120 ms upstream. */
const CHUNK_MS = 2;
/** 60 words: 60 text deltas. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One streamed call: ms to the first body bytes and to the end; throws unless 200. */
async function timed(t: Target): Promise<{ first: number; total: number }> {
  const t0 = performance.now();
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
  if (res.status !== 200) throw new Error(`${t.name}: ${res.status} ${await res.text()}`);
  const reader = res.body?.getReader();
  if (!reader) throw new Error(`${t.name}: no body`);
  let first = 0;
  let bytes = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!first) first = performance.now() - t0;
    bytes += value.length;
  }
  if (bytes === 0) throw new Error(`${t.name}: empty stream`);
  return { first, total: performance.now() - t0 };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const ms = (x: number) => x.toFixed(2);

async function main() {
  const s = await startRelayStack();
  const openai = await startFakeProvider({
    kind: 'openai',
    key: 'up',
    reply: REPLY,
    promptTokens: 20,
    record: false,
    chunkDelayMs: CHUNK_MS,
  });
  const claude = await startFakeProvider({
    kind: 'anthropic',
    key: 'up',
    reply: REPLY,
    promptTokens: 20,
    record: false,
    chunkDelayMs: CHUNK_MS,
  });
  try {
    const gpt = modelName('gpt-4o-mini');
    const sonnet = modelName('claude-3-5-sonnet');
    const u = await userWithToken(s, { quota: 1_000_000_000 });
    await createChannel(s, { type: 1, baseUrl: openai.url, key: 'up', models: gpt });
    await createChannel(s, { type: 14, baseUrl: claude.url, key: 'up', models: sonnet });
    await routable(s.stack.relayUrl, u.key, gpt);
    await routable(s.stack.relayUrl, u.key, sonnet);

    const relay = (model: string): Target => ({
      name: model,
      url: `${s.stack.relayUrl}/v1/responses`,
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: 'Say sixty words.', stream: true, max_output_tokens: 200 }),
    });
    const targets = {
      'passed through (relay -> OpenAI /v1/responses)': relay(gpt),
      'OpenAI fake direct': {
        name: 'openai direct',
        url: `${openai.url}/v1/responses`,
        headers: { authorization: 'Bearer up', 'content-type': 'application/json' },
        body: JSON.stringify({ model: gpt, input: 'Say sixty words.', stream: true, max_output_tokens: 200 }),
      },
      'translated (relay -> Claude /v1/messages)': relay(sonnet),
      'Claude fake direct': {
        name: 'claude direct',
        url: `${claude.url}/v1/messages`,
        headers: { 'x-api-key': 'up', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: sonnet,
          max_tokens: 200,
          stream: true,
          messages: [{ role: 'user', content: 'Say sixty words.' }],
        }),
      },
    } satisfies Record<string, Target>;
    const names = Object.keys(targets) as (keyof typeof targets)[];
    const firsts = new Map<string, number[]>(names.map((n) => [n, []]));
    const totals = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let i = 0; i < WARMUP + N; i++) {
      for (const n of names) {
        const r = await timed(targets[n]);
        if (i < WARMUP) continue;
        firsts.get(n)?.push(r.first);
        totals.get(n)?.push(r.total);
      }
    }
    console.log(`\n${N} streamed Responses calls per target, one at a time (${WARMUP} warm-up calls each left out)\n`);
    console.log('| target | first event p50 / p99 ms | whole stream p50 / p99 ms |');
    console.log('|---|---|---|');
    for (const n of names) {
      const f = firsts.get(n) ?? [];
      const t = totals.get(n) ?? [];
      console.log(`| ${n} | ${ms(pct(f, 50))} / ${ms(pct(f, 99))} | ${ms(pct(t, 50))} / ${ms(pct(t, 99))} |`);
    }
    const added = (relayName: keyof typeof targets, direct: keyof typeof targets, of: Map<string, number[]>) =>
      ms(pct(of.get(relayName) ?? [], 50) - pct(of.get(direct) ?? [], 50));
    const [passed, openaiDirect, translated, claudeDirect] = names as [
      keyof typeof targets,
      keyof typeof targets,
      keyof typeof targets,
      keyof typeof targets,
    ];
    console.log('\nAdded by the relay (p50, relay minus direct):');
    console.log(
      `- passed through: first event ${added(passed, openaiDirect, firsts)} ms, whole stream ${added(passed, openaiDirect, totals)} ms`,
    );
    console.log(
      `- translated: first event ${added(translated, claudeDirect, firsts)} ms, whole stream ${added(translated, claudeDirect, totals)} ms`,
    );
  } finally {
    await openai.close();
    await claude.close();
    await s.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
