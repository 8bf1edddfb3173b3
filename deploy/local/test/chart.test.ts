/**
 * The Helm chart, the plain manifests and the Tilt image builds, checked offline with the tools
 * that deploy/local/bin/setup.sh installs from the Go module proxy (.local/bin: helm, kubeconform,
 * kustomize; .local/k8s-schemas: strict JSON schemas of Kubernetes 1.31 objects and of the
 * ServiceMonitor, PrometheusRule and ScaledObject custom resources). No cluster, no chart registry.
 * Value sets: deploy/helm/aigw/ci/*-values.yaml.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const chart = path.join(root, 'deploy/helm/aigw');
const bin = (tool: string) => path.join(root, '.local/bin', tool);
const schemaDir = path.join(root, '.local/k8s-schemas');
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');

const SERVICES = ['gateway', 'users', 'channels', 'billing', 'relay', 'logs', 'tasks'];
const PUBLIC = ['gateway', 'relay', 'tasks'];

// setup.sh writes this file, with the reason, when the tools cannot be installed on this machine
// (no Go toolchain, no Go module proxy); anywhere else a missing tool is a failure.
const skippedBySetup = path.join(root, '.local/stamps/k8s-tools.skipped');
const missing = ['helm', 'kubeconform', 'kustomize'].filter((t) => !existsSync(bin(t)));
if (!existsSync(path.join(schemaDir, 'apps/deployment_v1.json'))) missing.push('.local/k8s-schemas');
const skip = missing.length > 0 && existsSync(skippedBySetup);
if (skip) {
  console.warn(
    `chart.test.ts SKIPPED: ${missing.join(', ')} missing and setup.sh could not install them: ${readFileSync(skippedBySetup, 'utf8').trim()}`,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects are checked field by field.
type K8sObject = Record<string, any>;

async function tool(name: string, args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  const child = run(bin(name), args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return child;
}

/** helm template with the given value files and flags; the objects it renders. */
async function render(valueFiles: string[], extra: string[] = []): Promise<{ text: string; objects: K8sObject[] }> {
  const args = ['template', 'aigw', chart, '--namespace', 'aigw', ...valueFiles.flatMap((f) => ['-f', f]), ...extra];
  const { stdout } = await tool('helm', args);
  const objects = parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
  return { text: stdout, objects };
}

/** kubeconform, strict, offline: every object must have a schema and be valid against it. */
async function validate(manifests: string): Promise<{ valid: number; invalid: string[] }> {
  const args = [
    '-strict',
    '-summary',
    '-output',
    'json',
    '-schema-location',
    `${schemaDir}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
    '-',
  ];
  let stdout: string;
  try {
    stdout = (await tool('kubeconform', args, manifests)).stdout;
  } catch (err) {
    stdout = (err as { stdout: string }).stdout;
  }
  const report = JSON.parse(stdout) as {
    resources: { kind: string; name: string; status: string; msg: string }[];
    summary: { valid: number; invalid: number; errors: number; skipped: number };
  };
  const invalid = report.resources
    .filter((r) => r.status !== 'statusValid')
    .map((r) => `${r.kind} ${r.name}: ${r.status} ${r.msg}`);
  return { valid: report.summary.valid, invalid };
}

const valueSets = readdirSync(path.join(chart, 'ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();
// Tilt's values are a value set too: `tilt up` renders the chart with them.
const ci = (name: string) =>
  name === 'tilt' ? path.join(root, 'tilt/values-dev.yaml') : path.join(chart, 'ci', `${name}-values.yaml`);
const rendered = new Map<string, { text: string; objects: K8sObject[] }>();
const get = (set: string) => {
  const r = rendered.get(set);
  if (!r) throw new Error(`value set ${set} was not rendered`);
  return r.objects;
};
const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata?.name === name);
const env = (deployment: K8sObject) =>
  Object.fromEntries(
    (deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [
      e.name,
      e.value,
    ]),
  );

describe.skipIf(skip)('Helm chart, plain manifests and image builds, offline', () => {
  beforeAll(async () => {
    if (missing.length) {
      throw new Error(`${missing.join(', ')} missing: run bash deploy/local/bin/setup.sh`);
    }
    const sets = [...valueSets.map((f) => f.replace(/-values\.yaml$/, '')), 'tilt'];
    const results = await Promise.all(sets.map((set) => render([ci(set)])));
    sets.forEach((set, i) => {
      rendered.set(set, results[i] as { text: string; objects: K8sObject[] });
    });
  });

  it('when the chart is linted strictly with every value set, then helm reports no warning and no failure', async () => {
    expect(valueSets.length).toBeGreaterThanOrEqual(8);
    const results = await Promise.all(
      [...valueSets.map((f) => path.join(chart, 'ci', f)), ci('tilt')].map((f) =>
        tool('helm', ['lint', '--strict', chart, '-f', f]),
      ),
    );
    for (const r of results) {
      expect(r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    }
    // No dependencies to fetch: nothing to build, nothing missing.
    expect(read('deploy/helm/aigw/Chart.yaml')).not.toMatch(/^dependencies:/m);
  });

  it('when every value set is rendered, then every object is valid against the Kubernetes and CRD schemas', async () => {
    for (const [set, { text, objects }] of rendered) {
      const { valid, invalid } = await validate(text);
      expect(invalid, set).toEqual([]);
      expect(valid, set).toBe(objects.length);
    }
    const kinds = new Set([...rendered.values()].flatMap((r) => r.objects.map((o) => o.kind)));
    for (const kind of ['Deployment', 'StatefulSet', 'HorizontalPodAutoscaler', 'ScaledObject', 'Ingress']) {
      expect(kinds).toContain(kind);
    }
    for (const kind of ['ServiceMonitor', 'PrometheusRule', 'NetworkPolicy', 'PodDisruptionBudget']) {
      expect(kinds).toContain(kind);
    }
  });

  it('when an object has a misspelt field, then the validation rejects it (the schemas are strict)', async () => {
    const text = rendered.get('defaults')?.text ?? '';
    const broken = text.replace(/^ {2}revisionHistoryLimit: 5$/m, '  revisionHistoryLimt: 5');
    expect(broken).not.toBe(text);
    const { invalid } = await validate(broken);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toContain('revisionHistoryLimt');
  });

  it('when a value is misspelt or out of range, then helm refuses to render (values.schema.json)', async () => {
    const cases: [string[], string][] = [
      [['--set', 'relay.drainSecond=60'], 'drainSecond'],
      [['--set', 'relay.autoscaling.inFlight.mode=kedaa'], 'mode'],
      [['--set', 'billing.replica=3'], 'replica'],
      [['--set', 'relay.drainSeconds=0'], 'drainSeconds'],
      [['--set', 'typo.enabled=true'], 'typo'],
    ];
    for (const [flags, word] of cases) {
      const err = await render([ci('defaults')], flags).then(
        () => undefined,
        (e: { stderr: string }) => e.stderr,
      );
      expect(err, flags.join(' ')).toMatch(/schema/);
      expect(err).toContain(word);
    }
  });

  it('when the kustomize overlays are built, then base, infra and dev validate, and base is the chart rendered now', async () => {
    for (const overlay of ['base', 'infra', 'dev']) {
      const { stdout } = await tool('kustomize', ['build', path.join(root, 'deploy/k8s', overlay)]);
      const { valid, invalid } = await validate(stdout);
      expect(invalid, overlay).toEqual([]);
      expect(valid, overlay).toBeGreaterThan(overlay === 'infra' ? 5 : 30);
    }
    const out = mkdtempSync(path.join(tmpdir(), 'aigw-base-'));
    try {
      await run('bash', [path.join(root, 'deploy/k8s/render-base.sh'), out], { cwd: root });
      for (const file of readdirSync(out)) {
        expect(read(`deploy/k8s/base/${file}`), `deploy/k8s/base/${file} is stale: run deploy/k8s/render-base.sh`).toBe(
          readFileSync(path.join(out, file), 'utf8'),
        );
      }
      const listed = read('deploy/k8s/base/kustomization.yaml');
      for (const file of readdirSync(out)) expect(listed).toContain(`- ${file}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('when a relay pod is stopped, then it drains for relay.drainSeconds, exits 20 s later at most, inside its grace period', () => {
    for (const [set, drain] of [
      ['defaults', 300],
      ['hpa-adapter', 600],
    ] as const) {
      const relay = find(get(set), 'Deployment', 'aigw-relay');
      const e = env(relay as K8sObject);
      expect(e.RELAY_DRAIN_MS).toBe(String(drain * 1000));
      expect(e.RELAY_FORCE_EXIT_MS).toBe(String((drain + 20) * 1000));
      const pod = relay?.spec.template.spec;
      // The usage spool lives on the pod's emptyDir, which a restarted container keeps.
      expect(e.RELAY_USAGE_SPOOL_DIR).toBe('/tmp/usage-spool');
      const tmp = pod.containers[0].volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
      expect(pod.volumes.find((v: { name: string }) => v.name === tmp.name)).toMatchObject({ emptyDir: {} });
      expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
      // preStop (5 s) + drain + 20 s of flushing before the forced exit + 10 s to spare.
      expect(pod.terminationGracePeriodSeconds).toBe(drain + 5 + 30);
    }
    // The other services keep the shared grace period.
    expect(find(get('defaults'), 'Deployment', 'aigw-billing')?.spec.template.spec.terminationGracePeriodSeconds).toBe(
      30,
    );
  });

  it('when the defaults are rendered, then the relay requests one CPU, billing runs two replicas and every service has a PDB', () => {
    const objects = get('defaults');
    const relay = find(objects, 'Deployment', 'aigw-relay') as K8sObject;
    expect(String(relay.spec.template.spec.containers[0].resources.requests.cpu)).toBe('1');
    expect(relay.spec.replicas).toBeUndefined(); // the HPA owns it
    expect(find(objects, 'Deployment', 'aigw-billing')?.spec.replicas).toBe(2);
    for (const svc of SERVICES) {
      const pdb = find(objects, 'PodDisruptionBudget', `aigw-${svc}`);
      expect(pdb, svc).toBeDefined();
      const podLabels = find(objects, 'Deployment', `aigw-${svc}`)?.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(pdb?.spec.selector.matchLabels)) expect(podLabels[k]).toBe(v);
    }
    // pdb.enabled is honoured for every service.
    const off = get('networkpolicy');
    for (const svc of SERVICES) {
      const disabled = ['relay', 'gateway', 'billing'].includes(svc);
      expect(Boolean(find(off, 'PodDisruptionBudget', `aigw-${svc}`)), svc).toBe(!disabled);
    }
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'aigw-relay') as K8sObject;
    expect(hpa.spec.metrics.map((m: K8sObject) => m.resource?.name ?? m.pods?.metric.name)).toEqual(['cpu']);
  });

  it('when in-flight autoscaling is on, then the relay scales on relay_in_flight_requests beside CPU (adapter or KEDA)', () => {
    const adapter = find(get('hpa-adapter'), 'HorizontalPodAutoscaler', 'aigw-relay') as K8sObject;
    expect(adapter.spec.minReplicas).toBe(3);
    expect(adapter.spec.maxReplicas).toBe(30);
    const names = adapter.spec.metrics.map((m: K8sObject) => m.resource?.name ?? m.pods?.metric.name);
    expect(names).toEqual(['cpu', 'memory', 'relay_in_flight_requests']);
    expect(adapter.spec.metrics[2].pods.target).toEqual({ type: 'AverageValue', averageValue: '150' });

    const keda = get('keda');
    expect(find(keda, 'HorizontalPodAutoscaler', 'aigw-relay')).toBeUndefined(); // KEDA makes its own
    const so = find(keda, 'ScaledObject', 'aigw-relay') as K8sObject;
    expect(so.spec.scaleTargetRef.name).toBe('aigw-relay');
    expect(so.spec.triggers.map((t: K8sObject) => t.type)).toEqual(['cpu', 'prometheus']);
    const prom = so.spec.triggers[1].metadata;
    expect(prom.serverAddress).toBe('http://prometheus-operated.monitoring:9090');
    expect(prom.query).toBe('sum(relay_in_flight_requests{namespace="aigw",pod=~"aigw-relay-.*"})');
    expect(prom.threshold).toBe('200');
    expect(find(keda, 'Deployment', 'aigw-relay')?.spec.replicas).toBeUndefined();
  });

  it('when the Ingress is on, then it routes only API ports: never an ops port, /metrics or /readyz', () => {
    const objects = get('ingress');
    const ingress = find(objects, 'Ingress', 'aigw') as K8sObject;
    expect(ingress.spec.rules.map((r: K8sObject) => r.host)).toEqual(['aigw.example.com', 'api.aigw.example.com']);
    const backends = ingress.spec.rules.flatMap((r: K8sObject) => r.http.paths);
    expect(backends.length).toBe(30);
    // The task APIs go to the tasks service (Prefix: /v1/videos is longer than the relay's /v1).
    const tasksPaths = backends
      .filter((p: K8sObject) => p.backend.service.name === 'aigw-tasks')
      .map((p: K8sObject) => p.path);
    expect(new Set(tasksPaths)).toEqual(
      new Set([
        '/mj',
        '/fast/mj',
        '/relax/mj',
        '/turbo/mj',
        '/suno',
        '/kling',
        '/jimeng',
        '/v1/videos',
        '/v1/video/generations',
      ]),
    );
    for (const p of backends) {
      expect(p.path).not.toMatch(/metrics|readyz|healthz/);
      const svc = find(objects, 'Service', p.backend.service.name) as K8sObject;
      const port = svc.spec.ports.find((x: K8sObject) => x.port === p.backend.service.port.number);
      expect(port?.name, `${p.path} -> ${svc.metadata.name}:${p.backend.service.port.number}`).toBe('http');
      // The port the service serves /metrics and /readyz on (METRICS_PORT) is another one.
      const e = env(find(objects, 'Deployment', svc.metadata.name) as K8sObject);
      expect(e.METRICS_PORT).toMatch(/^\d+$/);
      expect(Number(e.METRICS_PORT)).not.toBe(port.port);
      expect(Number(e.HTTP_PORT)).toBe(port.port);
    }
    const routed = new Set(backends.map((p: K8sObject) => p.backend.service.name));
    expect([...routed].sort()).toEqual(PUBLIC.map((s) => `aigw-${s}`).sort());
  });

  it('when the ServiceMonitors are on, then every service is scraped on its ops port by name, service labels kept', () => {
    const objects = get('monitoring');
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
    const scraped = new Map<string, string>();
    for (const m of monitors) {
      expect(m.metadata.labels.release).toBe('kube-prometheus-stack');
      const [endpoint] = m.spec.endpoints;
      expect(m.spec.endpoints).toHaveLength(1);
      expect(endpoint.honorLabels).toBe(true); // grpc/build_info `service` labels stay `service`
      for (const c of m.spec.selector.matchExpressions[0].values as string[]) scraped.set(c, endpoint.port);
    }
    expect([...scraped.keys()].sort()).toEqual([...SERVICES].sort());
    for (const [svc, portName] of scraped) {
      const service = find(objects, 'Service', `aigw-${svc}`) as K8sObject;
      const port = service.spec.ports.find((p: K8sObject) => p.name === portName);
      expect(port, `${svc} has no port ${portName}`).toBeDefined();
      const e = env(find(objects, 'Deployment', `aigw-${svc}`) as K8sObject);
      // The port serving /metrics: METRICS_PORT where the service has a public port, else HTTP_PORT.
      expect(String(port.port)).toBe(PUBLIC.includes(svc) ? e.METRICS_PORT : e.HTTP_PORT);
      expect(portName).toBe(PUBLIC.includes(svc) ? 'metrics' : 'http');
    }
    expect(objects.filter((o) => o.kind === 'PrometheusRule')).toHaveLength(1);
    const dashboards = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.labels.grafana_dashboard === '1');
    expect(dashboards.map((d) => d.metadata.name).sort()).toEqual(
      ['infra-clients', 'relay', 'services', 'usage-pipeline'].map((n) => `aigw-dashboard-${n}`),
    );
    for (const d of dashboards) {
      expect(d.metadata.annotations.grafana_folder).toBe('aigw');
      for (const json of Object.values(d.data)) expect(JSON.parse(json as string).uid).toMatch(/^aigw-/);
    }
  });

  it('when NetworkPolicies are on, then Prometheus reaches the relay and tasks ops ports, and nobody else does', () => {
    const objects = get('networkpolicy');
    for (const svc of ['relay', 'tasks']) {
      const policy = find(objects, 'NetworkPolicy', `aigw-${svc}`) as K8sObject;
      const rule = policy.spec.ingress.find((r: K8sObject) => r.ports.some((p: K8sObject) => p.port === 'metrics'));
      expect(rule, svc).toBeDefined();
      expect(rule.from).toEqual([
        { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'aigw', 'app.kubernetes.io/instance': 'aigw' } } },
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        { ipBlock: { cidr: '10.0.0.0/16' } },
      ]);
    }
  });

  it('when the infrastructure runs in the release, then the services point at its servers', () => {
    const objects = get('in-cluster-infra');
    for (const name of ['aigw-mongodb', 'aigw-kafka', 'aigw-redis']) {
      expect(find(objects, 'StatefulSet', name), name).toBeDefined();
      expect(find(objects, 'Service', name)?.spec.clusterIP).toBe('None');
    }
    const infra = find(objects, 'Secret', 'aigw-infra') as K8sObject;
    expect(infra.stringData).toEqual({
      MONGO_URL: 'mongodb://aigw-mongodb:27017',
      REDIS_URL: 'redis://aigw-redis:6379',
    });
    expect(find(objects, 'ConfigMap', 'aigw')?.data.KAFKA_BROKERS).toBe('aigw-kafka:9092');
    const kafka = find(objects, 'StatefulSet', 'aigw-kafka')?.spec.template.spec.containers[0];
    expect(kafka.env.find((e: K8sObject) => e.name === 'KAFKA_ADVERTISED_LISTENERS').value).toBe(
      'PLAINTEXT://aigw-kafka:9092',
    );
    // MongoDB (the in-release server, or an external one): the services run its flavor.
    for (const set of ['in-cluster-infra', 'external-infra']) {
      for (const svc of ['users', 'billing', 'logs', 'tasks']) {
        expect(env(find(get(set), 'Deployment', `aigw-${svc}`) as K8sObject).MONGO_FLAVOR, `${set} ${svc}`).toBe(
          'mongodb',
        );
      }
    }
    // External servers: nothing of the kind is rendered.
    const external = get('external-infra');
    expect(external.filter((o) => o.kind === 'StatefulSet')).toEqual([]);
    expect(find(external, 'ConfigMap', 'aigw')?.data.KAFKA_BROKERS).toContain('kafka-2.kafka.data:9092');
  });

  it('when NOTES.txt is shown after an install, then it says how to get the root password, metrics and traces', async () => {
    // helm renders NOTES.txt only at install time (which needs a cluster): render it through a
    // template of a throw-away copy of the chart instead.
    const dir = mkdtempSync(path.join(tmpdir(), 'aigw-notes-'));
    try {
      cpSync(chart, path.join(dir, 'aigw'), { recursive: true });
      writeFileSync(
        path.join(dir, 'aigw/templates/notes-check.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: {{ include (print $.Template.BasePath "/NOTES.txt") . | toJson }}\n',
      );
      const notesOf = async (set: string) => {
        const args = ['template', 'aigw', path.join(dir, 'aigw'), '-n', 'aigw', '-f', ci(set)];
        const { stdout } = await tool('helm', [...args, '--show-only', 'templates/notes-check.yaml']);
        return (parseAllDocuments(stdout)[0]?.toJS() as K8sObject).data.notes as string;
      };
      const external = await notesOf('external-infra');
      expect(external).toContain(
        "kubectl -n aigw get secret aigw-secrets -o jsonpath='{.data.ROOT_PASSWORD}' | base64 -d",
      );
      expect(external).toContain('Traces: OTLP/HTTP to http://otel-collector.observability:4318');
      expect(external).toContain('relay 9468');
      const monitoring = await notesOf('monitoring');
      expect(monitoring).toContain('ServiceMonitors aigw and aigw-internal');
      expect(monitoring).toContain('Traces: off (config.otlpEndpoint is empty');
      expect(monitoring).toContain('curl -s localhost:9468/metrics');
      const defaults = await notesOf('defaults');
      expect(defaults).toContain('the well-known default password applies');
      expect(defaults).toContain('grace period is 335 s');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when Tilt builds the images, then every path a Dockerfile copies is inside the build context it sends', () => {
    const tiltfile = read('tilt/Tiltfile');
    const shared = [...(/^SHARED = \[([^\]]*)\]/m.exec(tiltfile)?.[1] ?? '').matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(shared.length).toBeGreaterThan(5);
    // The per-service context as the Tiltfile builds it (kept verbatim here, so that a change there fails here).
    expect(tiltfile).toContain("only = ['services/' + svc, 'services/Dockerfile'] + SHARED");
    expect(tiltfile).toContain("only.append('console')");
    for (const svc of SERVICES) {
      const dockerfile = svc === 'gateway' ? 'services/gateway/Dockerfile' : 'services/Dockerfile';
      const context = [`services/${svc}`, 'services/Dockerfile', ...shared, ...(svc === 'gateway' ? ['console'] : [])];
      const sources = read(dockerfile)
        .split('\n')
        .filter((l) => /^COPY\s/.test(l) && !/--from=/.test(l))
        .flatMap((l) =>
          l
            .replace(/^COPY\s+/, '')
            .split(/\s+/)
            .slice(0, -1),
        )
        .map((p) => p.replace(/\$\{SERVICE\}/g, svc).replace(/\/$/, ''));
      expect(sources.length).toBeGreaterThan(8);
      for (const src of sources) {
        const inside = context.some((c) => src === c || src.startsWith(`${c}/`));
        expect(inside, `${dockerfile} (${svc}) copies ${src}, which Tilt's context leaves out`).toBe(true);
        expect(existsSync(path.join(root, src)), `${src} exists`).toBe(true);
      }
    }
  });

  afterAll(() => rendered.clear());
});
