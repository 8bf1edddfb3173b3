import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (p: string) => readFileSync(`${root}${p}`, 'utf8');
const SERVICES = ['gateway', 'users', 'channels', 'billing', 'relay', 'logs', 'tasks'];
const GRPC_SERVICES = SERVICES.filter((s) => s !== 'gateway');

// The rendered chart (deploy/k8s/base, render-base.sh) checked without helm: ADR 0006 on by default.
describe('internal gRPC keys and NetworkPolicies in the plain manifests', () => {
  it.each(
    SERVICES,
  )('when %s is deployed, then it mounts every public key, its own private key only, and GRPC_AUTH_DIR', (svc) => {
    const manifest = read(`deploy/k8s/base/${svc}.yaml`);
    expect(manifest).toContain('name: GRPC_AUTH_DIR');
    expect(manifest).toContain('secretName: aigw-grpc-auth');
    const keys = [...manifest.matchAll(/- key: (\w+)\.key$/gm)].map((m) => m[1]);
    expect(keys).toEqual([svc]);
    const pubs = [...manifest.matchAll(/- key: (\w+)\.pub$/gm)].map((m) => m[1]);
    expect(pubs.sort()).toEqual([...SERVICES].sort());
  });

  it('when the base is applied, then every gRPC service gets a NetworkPolicy admitting only the release to its gRPC port', () => {
    expect(read('deploy/k8s/base/kustomization.yaml')).toContain('- networkpolicy.yaml');
    const policies = read('deploy/k8s/base/networkpolicy.yaml').split(/^---$/m);
    const names = policies.map((p) => /^ {2}name: aigw-(\w+)$/m.exec(p)?.[1]);
    expect(names.sort()).toEqual([...GRPC_SERVICES].sort());
    for (const policy of policies) {
      const grpcRule = policy.split('- from:')[1] ?? '';
      expect(grpcRule).toContain('app.kubernetes.io/instance: aigw');
      expect(grpcRule).toContain('port: grpc');
    }
  });

  it('when the chart renders the keys Secret, then it keeps existing keys (lookup) and survives uninstall', () => {
    const template = read('deploy/helm/aigw/templates/grpc-auth-secret.yaml');
    expect(template).toContain('lookup "v1" "Secret"');
    expect(template).toContain('helm.sh/resource-policy: keep');
    expect(read('deploy/helm/aigw/templates/_helpers.tpl')).toContain(
      `define "aigw.grpcAuthServices" -}}\n${SERVICES.join(' ')}`,
    );
  });
});
