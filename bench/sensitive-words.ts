/**
 * Sensitive-word matcher benchmark (a script, not a test): the relay's Aho-Corasick automaton
 * (services/relay/src/domain/sensitive-words.ts) against a plain search (`includes` per word),
 * with 100, 1,000 and 10,000 listed words on prompts of 1 KB, 16 KB and 256 KB of mixed
 * English and Chinese text holding none of the words (the common case: every byte is read).
 * Also the time to build the automaton, and a full request check (promptTexts + match) of a
 * 16 KB chat body. One process, no servers.
 *
 *   npx tsx bench/sensitive-words.ts [--quick]
 */
import {
  buildMatcher,
  parseWordList,
  promptTexts,
  sensitiveScreen,
  type WordMatcher,
} from '../services/relay/src/domain/sensitive-words.ts';

const QUICK = process.argv.includes('--quick');
const BUDGET_MS = QUICK ? 150 : 600;

let seed = 12_345;
const rnd = (n: number) => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 1;
  return seed % n;
};
const LATIN = 'abcdefghijklmnopqrstuvwxyz';
const CJK =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';

/** Lower-case words of 2 to 8 letters, or 2 to 4 Chinese characters; distinct. */
function wordList(n: number): string[] {
  const set = new Set<string>();
  while (set.size < n) {
    const zh = rnd(3) === 0;
    const len = zh ? 2 + rnd(3) : 4 + rnd(5);
    const abc = zh ? CJK : LATIN;
    let w = '';
    for (let i = 0; i < len; i++) w += abc[rnd(abc.length)];
    set.add(w);
  }
  return [...set];
}

/** Text of about `bytes` UTF-8 bytes of random words, with every listed word that occurs removed. */
function prompt(bytes: number, m: WordMatcher): string {
  const out: string[] = [];
  for (let size = 0; size < bytes; ) {
    const zh = rnd(4) === 0;
    const len = zh ? 2 + rnd(2) : 2 + rnd(7);
    const abc = zh ? CJK : LATIN;
    let w = '';
    for (let i = 0; i < len; i++) w += abc[rnd(abc.length)];
    out.push(w);
    size += Buffer.byteLength(w) + 1;
  }
  let s = out.join(' ');
  // Remove every accidental hit so each variant reads the whole text.
  for (let hits = m.find(s, 1e9); hits.length > 0; hits = m.find(s, 1e9))
    for (const w of hits) s = s.replaceAll(w, '.');
  return s;
}

/** Runs `fn` repeatedly for about BUDGET_MS; the mean time per call in microseconds. */
function time(fn: () => unknown): number {
  // Warm-up (the JIT's tiers) for a fifth of the budget, then measure.
  for (const w0 = performance.now(); performance.now() - w0 < BUDGET_MS / 5; ) fn();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < BUDGET_MS) {
    fn();
    n++;
    t = performance.now();
  }
  return ((t - t0) * 1000) / n;
}

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
const rows: string[] = [];

for (const count of [100, 1_000, 10_000]) {
  const words = wordList(count);
  // Build time: the median of 5 builds.
  const builds: number[] = [];
  let m = buildMatcher(words);
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    m = buildMatcher(words);
    builds.push(performance.now() - t0);
  }
  const buildMs = builds.sort((a, b) => a - b)[2] as number;
  for (const kb of [1, 16, 256]) {
    const text = prompt(kb * 1024, m);
    if (m.test(text)) throw new Error('the prompt holds a listed word');
    const ac = time(() => m.test(text));
    // Plain search: what a loop of includes() per word costs (skipped where it would take long).
    const lower = () => {
      const t = text.toLowerCase();
      for (const w of words) if (t.includes(w)) return true;
      return false;
    };
    const naive = count * kb > 1_000_000 ? Number.NaN : time(lower);
    const mbps = (Buffer.byteLength(text) / 1e6 / (ac / 1e6)).toFixed(0);
    rows.push(
      `| ${count.toLocaleString('en')} | ${kb} KB | ${fmt(ac)} | ${mbps} MB/s | ${Number.isNaN(naive) ? '-' : fmt(naive)} | ${buildMs.toFixed(1)} ms |`,
    );
  }
}

console.log('| words | prompt | automaton | throughput | includes() per word | build |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(r);

// A whole check as the relay runs it: a 16 KB chat body, 10,000 words, both switches on.
const words = wordList(10_000);
const values: Record<string, string> = {
  CheckSensitiveEnabled: 'true',
  CheckSensitiveOnPromptEnabled: 'true',
  SensitiveWords: words.join('\n'),
};
const screen = sensitiveScreen({ get: (k) => values[k], bool: (k) => values[k] === 'true', onChange: () => {} });
const all = buildMatcher(parseWordList(values.SensitiveWords));
const body = {
  model: 'gpt-4o-mini',
  messages: Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: prompt(2048, all) })),
};
if (promptTexts(body).length !== 8) throw new Error('unexpected prompt texts');
console.log(`\nwhole check of a 16 KB chat body (8 messages), 10,000 words: ${fmt(time(() => screen.check(body)))}`);
