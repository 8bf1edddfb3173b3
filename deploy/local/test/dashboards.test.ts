/**
 * The chart's Grafana dashboards (deploy/helm/aigw/dashboards/*.json) and alerts
 * (templates/prometheusrule.yaml): every dashboard parses, every PromQL expression parses
 * (Prometheus' own Lezer grammar, @prometheus-io/lezer-promql), and every metric they name is
 * exported by the services: a live scrape of /metrics of a stack on the real servers, after a
 * streamed and a plain completion went through the relay.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const chart = path.join(root, 'deploy/helm/aigw');
const helm = path.join(root, '.local/bin/helm');
const skippedBySetup = path.join(root, '.local/stamps/k8s-tools.skipped');

interface Query {
  where: string;
  expr: string;
}

// biome-ignore lint/suspicious/noExplicitAny: Grafana's dashboard JSON is walked generically.
type Json = any;

/** Every PromQL expression of a dashboard: panel targets and query variables (label_values(expr, label)). */
function dashboardQueries(file: string, dashboard: Json): Query[] {
  const out: Query[] = [];
  const panels = (list: Json[]): void => {
    for (const p of list ?? []) {
      for (const t of p.targets ?? []) out.push({ where: `${file} "${p.title}" ${t.refId}`, expr: t.expr });
      panels(p.panels);
    }
  };
  panels(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    const m = /^label_values\((.*),\s*[a-zA-Z_]\w*\)$/.exec(q);
    if (!m) throw new Error(`${file} variable ${v.name}: unexpected query ${q}`);
    out.push({ where: `${file} variable ${v.name}`, expr: m[1] as string });
  }
  return out;
}

/** Grafana's variables, replaced by values of the same PromQL type. */
const grafana = (expr: string) =>
  expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__range', '3h')
    .replace(/\$\{?(\w+)\}?/g, 'x');

/** Parses a PromQL expression; returns the metric names it selects, or throws on a syntax error. */
function metricsOf(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error = -1;
  tree.iterate({
    enter(node) {
      if (node.type.isError && error < 0) error = node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') {
        names.push(expr.slice(node.from, node.to));
      }
    },
  });
  if (error >= 0) throw new Error(`PromQL syntax error at ${error}: ${expr.slice(0, error)} <-- here`);
  return names;
}

const dashboardFiles = readdirSync(path.join(chart, 'dashboards')).filter((f) => f.endsWith('.json'));
const queries: Query[] = [];

describe('dashboards and alerts: syntax', () => {
  beforeAll(async () => {
    for (const file of dashboardFiles) {
      queries.push(...dashboardQueries(file, JSON.parse(readFileSync(path.join(chart, 'dashboards', file), 'utf8'))));
    }
    if (!existsSync(helm) && existsSync(skippedBySetup)) return; // chart.test.ts says why
    const { stdout } = await promisify(execFile)(helm, [
      'template',
      'aigw',
      chart,
      '-n',
      'aigw',
      '-f',
      path.join(chart, 'ci/monitoring-values.yaml'),
      '--show-only',
      'templates/prometheusrule.yaml',
    ]);
    const rule = parseAllDocuments(stdout)[0]?.toJS() as Json;
    for (const group of rule.spec.groups) {
      for (const r of group.rules) queries.push({ where: `PrometheusRule ${r.alert}`, expr: r.expr });
    }
  });

  it('when the dashboards are loaded, then each is JSON with a unique uid, a Prometheus data source variable and queries', () => {
    expect(dashboardFiles.sort()).toEqual(['infra-clients.json', 'relay.json', 'services.json', 'usage-pipeline.json']);
    const uids = new Set<string>();
    for (const file of dashboardFiles) {
      const d = JSON.parse(readFileSync(path.join(chart, 'dashboards', file), 'utf8'));
      uids.add(d.uid);
      expect(d.templating.list[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
      const ids = new Set<number>();
      for (const p of d.panels) {
        expect(ids.has(p.id), `${file} panel id ${p.id} twice`).toBe(false);
        ids.add(p.id);
        if (p.type !== 'row') expect(p.targets.length, `${file} "${p.title}"`).toBeGreaterThan(0);
      }
    }
    expect(uids.size).toBe(dashboardFiles.length);
  });

  it('when every PromQL expression is parsed, then none has a syntax error, and the alerts cover the issue list', () => {
    expect(queries.length).toBeGreaterThan(60);
    for (const q of queries) expect(() => metricsOf(grafana(q.expr)), q.where).not.toThrow();
    // The parser does catch errors (no silent pass).
    expect(() => metricsOf('sum(rate(relay_tokens_total[5m])')).toThrow(/syntax/);
    const alerts = queries.filter((q) => q.where.startsWith('PrometheusRule')).map((q) => q.where.split(' ')[1]);
    expect(alerts).toEqual(
      expect.arrayContaining([
        'AigwRelayHighErrorRate',
        'AigwRelayTimeToFirstTokenHigh',
        'AigwChannelAutoDisabled',
        'AigwKafkaConsumerLagHigh',
        'AigwSettleBacklog',
        'AigwServiceRestarting',
      ]),
    );
    // Every alert has its runbook in the repository.
    for (const alert of alerts) expect(existsSync(path.join(root, `docs/runbooks/${alert}.md`)), alert).toBe(true);
  });
});

/**
 * Names that /metrics exposes: every family of a `# TYPE` line, with a histogram's _bucket, _sum
 * and _count series and a summary's _sum and _count.
 */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

describe('dashboards and alerts: every metric they name is exported', () => {
  let s: RelayStack;
  let upstream: FakeProvider;
  beforeAll(async () => {
    s = await startRelayStack();
    upstream = await startFakeProvider({ kind: 'openai', key: 'k', reply: 'one two three' });
  });
  afterAll(async () => {
    await upstream?.close();
    await s?.stop();
  });

  it('when the stack served a streamed and a plain completion, then /metrics exports every metric of the dashboards and alerts', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: upstream.url, key: 'k', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    for (const stream of [true, false]) {
      const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream }),
      });
      const body = await res.text();
      expect(res.status, body).toBe(200);
      expect(body).toContain('three');
    }

    // The ops ports of the relay and the gateway, the HTTP (health and metrics) port of the others.
    const urls = [
      `http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`,
      `http://127.0.0.1:${s.stack.ports.gateway.metrics}/metrics`,
      ...(['users', 'channels', 'billing', 'logs'] as const).map(
        (svc) => `http://127.0.0.1:${s.stack.ports[svc].http}/metrics`,
      ),
    ];
    const exported = new Set<string>();
    for (const url of urls) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      for (const n of exposedNames(await res.text())) exported.add(n);
    }
    expect(exported).toContain('process_start_time_seconds');

    const named = new Map<string, string>();
    for (const q of queries) for (const m of metricsOf(grafana(q.expr))) if (!named.has(m)) named.set(m, q.where);
    expect(named.size).toBeGreaterThan(30);
    const unknown = [...named].filter(([m]) => !exported.has(m)).map(([m, where]) => `${m} (${where})`);
    expect(unknown).toEqual([]);
  });
});
