/** The benchmark's fast fake upstream (OpenAI wire format). Usage: tsx services/relay/test/bench/fake-upstream.ts <port> [chunkDelayMs] */
import { startFakeProvider } from '@aigw/testkit/fakes';

const fake = await startFakeProvider({
  kind: 'openai',
  record: false,
  port: Number(process.argv[2] ?? 0),
  reply: 'one two three four five six seven eight nine ten',
  chunkDelayMs: Number(process.argv[3] ?? 0),
});
process.send?.({ ready: true, port: fake.port });
console.error(`fake upstream on ${fake.port}`);
