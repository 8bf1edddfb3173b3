/**
 * The money path at speed, side by side (issue 23 point 7): bench/e2e.ts once per embedded store
 * and wallet mode, each on servers of its own (`--infra=<store>`), one after the other, then one
 * table of the figures the targets name: the client's p50/p99 with pre-consume skipped (large
 * wallets) and on every request (small wallets), the ratio of the two p50s, and the CPU per request
 * of our services, of the servers and of the whole platform.
 *
 *   npx tsx bench/money-path.ts [--stores=sqlite,postgresql] [--modes=large,small,slices] [--rates=500] [--step=30]
 *                               [--users=20] [--backlog=20000]
 *
 * Modes: large wallets (pre-consume skipped), small (a pre-consume per request), slices (small,
 * reservations drawn from wallet slices: RELAY_WALLET_SLICES=1).
 *
 * Each run's own report is printed as it goes. Exits 1 when any run's accounting identity broke
 * (or a run failed).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const STORES = arg('stores', 'sqlite,postgresql').split(',');
const RATES = arg('rates', '500');
const STEP = arg('step', '30');
const USERS = arg('users', '20');
const BACKLOG = arg('backlog', '20000');
/** Wallet modes, each a run: large (skip), small (a pre-consume per request), slices (RELAY_WALLET_SLICES=1). */
const MODES = arg('modes', 'large,small,slices').split(',');
const SERVICES = ['relay', 'billing', 'logs', 'channels', 'users', 'gateway'];
const SERVERS = ['store', 'kafka', 'redis'];

interface Step {
  rate: number;
  served: number;
  errors: number;
  clientP50: number;
  clientP99: number;
  settleP99: number;
  logP99: number;
  cpuMsPerRequest: Record<string, number>;
}
interface RunResult {
  infra: string;
  wallets: string;
  steps: Step[];
  identityHeld: boolean;
}

function runE2e(store: string, wallets: string, out: string): Promise<number> {
  const args = [
    '--import',
    'tsx',
    'bench/e2e.ts',
    `--infra=${store}`,
    `--wallets=${wallets}`,
    `--rates=${RATES}`,
    `--step=${STEP}`,
    `--users=${USERS}`,
    `--backlog=${BACKLOG}`,
    `--json=${out}`,
  ];
  return new Promise((res) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    child.once('exit', (code) => res(code ?? 1));
  });
}

const f = (n: number | undefined, d = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '-');
const sum = (per: Record<string, number>, names: string[]) => names.reduce((t, n) => t + (per[n] ?? 0), 0);

const dir = mkdtempSync(join(tmpdir(), 'aigw-money-path-'));
const results: RunResult[] = [];
let failed = false;
try {
  for (const store of STORES) {
    for (const wallets of MODES) {
      console.log(`\n# ${store}, ${wallets} wallets\n`);
      const out = join(dir, `${store}-${wallets}.json`);
      const code = await runE2e(store, wallets, out);
      try {
        const r = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
        results.push(r);
        if (code !== 0 || !r.identityHeld) failed = true;
      } catch {
        console.log(`(no figures from the ${store}/${wallets} run: it exited ${code})`);
        failed = true;
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log('\n# The money path, side by side\n');
console.log(
  '| store | wallets | rate req/s | served | errors | client p50 / p99 ms | settle lag p99 | log lag p99 | CPU ms/request: our services | servers (store, Kafka, Redis) | whole platform | identity |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results)
  for (const st of r.steps) {
    const per = st.cpuMsPerRequest;
    console.log(
      `| ${r.infra} | ${r.wallets} | ${st.rate} | ${st.served} | ${st.errors} | ${f(st.clientP50)} / ${f(st.clientP99)} | ${f(st.settleP99)} | ${f(st.logP99)} | ${f(sum(per, SERVICES), 3)} | ${f(sum(per, SERVERS), 3)} (${SERVERS.map((n) => f(per[n], 3)).join(', ')}) | ${f(sum(per, [...SERVICES, ...SERVERS]), 3)} | ${r.identityHeld ? 'held' : 'BROKEN'} |`,
    );
  }
console.log('');
for (const store of STORES) {
  const at = (w: string) => results.find((r) => r.infra === store && r.wallets === w)?.steps.at(-1);
  const skip = at('large');
  for (const mode of ['small', 'slices']) {
    const pre = at(mode);
    if (skip && pre) summarise(store, mode, skip, pre);
  }
}

/** The targets of issue 23 point 7 for one pre-consume mode against the skip path. */
function summarise(store: string, mode: string, skip: Step, pre: Step): void {
  const whole = Math.max(
    sum(skip.cpuMsPerRequest, [...SERVICES, ...SERVERS]),
    sum(pre.cpuMsPerRequest, [...SERVICES, ...SERVERS]),
  );
  console.log(
    `- ${store} at ${pre.rate} req/s, ${mode === 'slices' ? 'pre-consume from wallet slices' : 'a pre-consume per request'}: pre-consume p50 ${f(pre.clientP50)} ms = ${f(pre.clientP50 / Math.max(1, skip.clientP50), 1)}x the skip path's ${f(skip.clientP50)} ms (target at most 2x: ${pre.clientP50 <= 2 * Math.max(1, skip.clientP50) ? 'met' : 'not met'}); pre-consume p99 ${f(pre.clientP99)} ms (target at most 500: ${pre.clientP99 <= 500 ? 'met' : 'not met'}); skip p50 ${f(skip.clientP50)} ms (target at most 25: ${skip.clientP50 <= 25 ? 'met' : 'not met'}); whole platform up to ${f(whole, 2)} ms CPU per request (target at most 1.5: ${whole <= 1.5 ? 'met' : 'not met'}).`,
  );
}
process.exit(failed ? 1 : 0);
