/**
 * Real coding agents, unmodified, through the gateway: Codex CLI (`codex exec`, Responses API) and
 * Claude Code (`claude -p`, Messages API with betas and cache_control) run as child processes
 * against scripted upstreams of each channel type (OpenAI, Claude, Gemini). Each run is a plan, a
 * shell tool call (`cat note.txt`, a file holding a secret only this run knows), its result, and a
 * final answer. Checks: the agent exits 0 and prints the final text, the upstream's second request
 * carries the secret as a tool result (the round trip happened in the agent), the wallet went down
 * by exactly the priced usage the upstream reported, and one log row per call with its tokens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@aigw/testkit';
import { createChannel, type RelayStack, setOption, startRelayStack, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { type AgentUpstream, type AgentWire, startAgentUpstream } from './fakes/fake-agent-upstream.ts';

const BIN = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));
const MODEL_RATIO = 2;
const COMPLETION_RATIO = 3;
const RUN_TIMEOUT_MS = 60_000;
const tag = randomBytes(3).toString('hex');
type Agent = 'codex' | 'claude';
const AGENTS: Agent[] = ['codex', 'claude'];
const KINDS: AgentWire[] = ['openai', 'anthropic', 'gemini'];
/**
 * One model per agent and channel type, so the runs can go side by side and each finds its own
 * calls at the upstream; names without a default price, so only this file's ratios apply.
 */
const modelOf = (agent: Agent, kind: AgentWire) => `${agent}-on-${kind}-${tag}`;
const ALL_MODELS = AGENTS.flatMap((a) => KINDS.map((k) => modelOf(a, k)));
const CHANNEL_TYPE: Record<AgentWire, number> = { openai: 1, anthropic: 14, gemini: 24 };
const UPSTREAM_KEY: Record<AgentWire, string> = { openai: 'up-openai', anthropic: 'up-claude', gemini: 'up-gemini' };
const finalText = (kind: AgentWire) => `Done: the note was read over the ${kind} channel.`;

let s: RelayStack;
const upstreams = {} as Record<AgentWire, AgentUpstream>;
const channels = {} as Record<AgentWire, number>;
/** Where each upstream's record of the runs starts (after the probes). */
const firstRunCall = {} as Record<AgentWire, number>;
let scratch: string;

beforeAll(async () => {
  s = await startRelayStack();
  scratch = mkdtempSync(join(tmpdir(), 'aigw-agents-'));
  const ratios = (v: number) => JSON.stringify(Object.fromEntries(ALL_MODELS.map((m) => [m, v])));
  // Completion ratio first: a relay that has the model ratio (and so serves the model) has both.
  await setOption(s, 'CompletionRatio', ratios(COMPLETION_RATIO));
  await setOption(s, 'ModelRatio', ratios(MODEL_RATIO));
  for (const kind of KINDS) {
    upstreams[kind] = await startAgentUpstream({
      kind,
      key: UPSTREAM_KEY[kind],
      command: 'cat note.txt',
      final: finalText(kind),
    });
    channels[kind] = await createChannel(s, {
      type: CHANNEL_TYPE[kind],
      baseUrl: upstreams[kind].url,
      key: UPSTREAM_KEY[kind],
      models: AGENTS.map((a) => modelOf(a, kind)).join(','),
    });
  }
  // The relay serves a model once it routes it and has its price (unpriced models are a 400):
  // a probe user's plain chat call, which the fake answers as a side request, tells both.
  const probe = await userWithToken(s);
  await Promise.all(
    ALL_MODELS.map((model) =>
      eventually(
        async () =>
          (
            await fetch(`${s.stack.gatewayUrl}/v1/chat/completions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${probe.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ model, messages: [{ role: 'user', content: 'ping' }] }),
            })
          ).status,
        (status) => status === 200,
        { what: `the relay serving and pricing ${model}` },
      ),
    ),
  );
  for (const kind of KINDS) firstRunCall[kind] = upstreams[kind].requests.length;
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await Promise.all(Object.values(upstreams).map((u) => u.close()));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a binary with only the given environment (no user config, proxy or credentials of the machine). */
function runAgent(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(join(BIN, bin), args, {
      cwd,
      env: { PATH: [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a hung agent is stopped with everything it started.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => {
      stderr += `\n[test] killed after ${RUN_TIMEOUT_MS} ms`;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group ended between the timer and the kill.
      }
    }, RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A home, temp dir and work dir of one run; the work dir holds the note the tool call reads. */
function workspace(name: string, secret: string) {
  const root = join(scratch, name);
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  const work = join(root, 'work');
  for (const d of [home, tmp, work]) mkdirSync(d, { recursive: true });
  writeFileSync(join(work, 'note.txt'), `${secret}\n`);
  return { root, home, work, env: { HOME: home, TMPDIR: tmp } };
}

/** `codex exec`, non-interactive, with a custom provider pointing at the gateway (Responses wire API). */
function codex(model: string, key: string, secret: string): Promise<Run> {
  const ws = workspace(model, secret);
  const codexHome = join(ws.root, 'codex-home');
  mkdirSync(codexHome);
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "aigw"',
      'check_for_update_on_startup = false',
      '[model_providers.aigw]',
      'name = "aigw"',
      `base_url = "${s.stack.gatewayUrl}/v1"`,
      'env_key = "AIGW_API_KEY"',
      'wire_api = "responses"',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '[otel]',
      'exporter = "none"',
      // Plugin and connector sync reach github.com and chatgpt.com in the background.
      '[features]',
      'plugins = false',
      'remote_plugin = false',
      'apps = false',
      'in_app_updates = false',
      '',
    ].join('\n'),
  );
  return runAgent(
    'codex',
    [
      'exec',
      '--strict-config',
      '--skip-git-repo-check',
      '--ephemeral',
      // The command is the fake's own `cat note.txt`; Codex's Linux sandbox needs user namespaces,
      // which CI containers do not promise.
      '--sandbox',
      'danger-full-access',
      '--color',
      'never',
      'Show me what note.txt says.',
    ],
    ws.work,
    { ...ws.env, CODEX_HOME: codexHome, AIGW_API_KEY: key },
  );
}

/** `claude -p` with the gateway as ANTHROPIC_BASE_URL; every model slot is ours, nothing else phones home. */
function claudeCode(model: string, key: string, secret: string): Promise<Run> {
  const ws = workspace(model, secret);
  return runAgent(
    'claude',
    [
      '-p',
      '--model',
      model,
      '--allowedTools',
      'Bash(cat:*)',
      '--no-session-persistence',
      'Show me what note.txt says.',
    ],
    ws.work,
    {
      ...ws.env,
      CLAUDE_CONFIG_DIR: join(ws.home, '.claude'),
      ANTHROPIC_BASE_URL: s.stack.gatewayUrl,
      ANTHROPIC_API_KEY: key,
      ANTHROPIC_MODEL: model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      CLAUDE_CODE_SUBAGENT_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  );
}

const quotaOf = (input: number, output: number) =>
  Math.max(1, Math.round((input + output * COMPLETION_RATIO) * MODEL_RATIO));

async function expectAgentRun(agent: Agent, kind: AgentWire, expect: ExpectStatic): Promise<void> {
  const model = modelOf(agent, kind);
  const u = await userWithToken(s);
  const secret = `note-${randomBytes(6).toString('hex')}`;
  const run = await (agent === 'codex' ? codex : claudeCode)(model, u.key, secret);
  const seen = upstreams[kind].requests.slice(firstRunCall[kind]).filter((r) => r.model === model);
  const explain = () =>
    [
      `${agent} over ${kind}: exit ${run.code} ${run.signal ?? ''}`,
      `--- stdout\n${run.stdout}`,
      `--- stderr\n${run.stderr.slice(-6000)}`,
      `--- the upstream saw\n${JSON.stringify(
        seen.map((r) => ({ path: r.path, step: r.step, tool: r.tool, toolResults: r.toolResults })),
        null,
        1,
      )}`,
    ].join('\n');
  if (run.code !== 0) console.error(explain());
  expect(run.code, explain()).toBe(0);
  expect(run.stdout, explain()).toContain(finalText(kind));

  // A plan with a tool call, then the final answer once the tool's output came back.
  expect(
    seen.map((r) => r.step).filter((step) => step !== 'side'),
    explain(),
  ).toEqual(['tool', 'final']);
  const final = seen.find((r) => r.step === 'final');
  expect(final?.toolResults.join('\n'), explain()).toContain(secret);

  // Billed: exactly the priced usage of every call the upstream answered.
  const expected = seen.reduce((sum, r) => sum + quotaOf(r.usage.input, r.usage.output), 0);
  const used = await eventually(
    async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0,
    (v) => v >= expected,
    { what: `${agent} over ${kind} billed ${expected}`, timeoutMs: 10_000 },
  );
  expect(used).toBe(expected);

  // Logged: one consume row per call, with the model, its channel and its tokens.
  const logs = await eventually(
    () =>
      s.logs.queryLogs({ filter: { userId: u.userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 20 } }),
    (r) => r.items.length >= seen.length,
    { what: `${seen.length} log rows of ${agent} over ${kind}`, timeoutMs: 10_000 },
  );
  const rows = logs.items.map((l) => [l.modelName, l.channel, l.promptTokens, l.completionTokens, l.quota, l.isStream]);
  const want = seen.map((r) => [
    model,
    channels[kind],
    r.usage.input,
    r.usage.output,
    quotaOf(r.usage.input, r.usage.output),
    true,
  ]);
  const order = (a: unknown[], b: unknown[]) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  expect(rows.sort(order)).toEqual(want.sort(order));

  if (agent === 'claude' && kind === 'anthropic') {
    // Passed through to Claude: Claude Code's betas and its prompt-cache breakpoints arrive.
    for (const r of seen) {
      expect(String(r.headers['anthropic-beta'])).toContain('claude-code-20250219');
      expect(JSON.stringify(r.body)).toContain('"cache_control":{"type":"ephemeral"');
    }
  }
}

// The six runs go side by side: each is mostly waiting on its agent's start-up and the relay.
describe.concurrent('coding agents through the gateway', () => {
  for (const kind of KINDS)
    for (const agent of AGENTS)
      it(
        `when ${agent === 'codex' ? 'Codex CLI' : 'Claude Code'} works a task on a ${kind} channel, then its tool call round-trips and every call is billed and logged`,
        { timeout: RUN_TIMEOUT_MS + 20_000 },
        ({ expect }) => expectAgentRun(agent, kind, expect),
      );
});
