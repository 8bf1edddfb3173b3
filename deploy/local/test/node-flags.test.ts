import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeFlagsOf } from '../stack/services.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (p: string) => readFileSync(`${root}${p}`, 'utf8');

/** The `nodeFlags: [...]` of a component's block in a values file. */
function helmFlags(values: string, component: string): string[] {
  const block = values.split(new RegExp(`^${component}:\\n`, 'm'))[1]?.split(/^\S/m)[0] ?? '';
  const m = /^ {2}nodeFlags: (\[.*\])$/m.exec(block);
  return m ? (JSON.parse(m[1] as string) as string[]) : [];
}

describe('Node flags of the relay', () => {
  it('when the relay runs locally, in the benchmark, from Helm or from the k8s base, then it gets the same flags', () => {
    const flags = nodeFlagsOf('relay');
    expect(flags).toContain('--single-threaded-gc');
    expect(helmFlags(read('deploy/helm/aigw/values.yaml'), 'relay')).toEqual(flags);
    const command = /command: (\[.*"dist\/main\.js"\])/.exec(read('deploy/k8s/base/relay.yaml'))?.[1];
    expect(JSON.parse(command ?? '[]')).toEqual(['node', ...flags, 'dist/main.js']);
    // Tilt runs the sources under tsx watch: the chart's command must not replace it there.
    expect(helmFlags(read('tilt/values-dev.yaml'), 'relay')).toEqual([]);
  });
});
