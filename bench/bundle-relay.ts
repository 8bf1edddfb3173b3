// The relay as the benchmark runs it: the production bundle (services/common/bundle.mjs), except
// that packages the relay does not depend on directly are compiled in too. In the image those
// resolve from a flat node_modules (pnpm deploy, hoisted); in this workspace they are not
// resolvable from services/relay, so the benchmark cannot run dist/ as it is.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleOptions, esbuildOf } from '../services/common/bundle.mjs';

const relayDir = resolve(import.meta.dirname, '../services/relay');
export const outdir = resolve(relayDir, '.bench-dist');

export async function bundleRelay(): Promise<string> {
  const pkg = JSON.parse(readFileSync(resolve(relayDir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const direct = Object.keys(pkg.dependencies).filter((d) => !d.startsWith('@aigw/'));
  await esbuildOf(relayDir).build({
    ...bundleOptions(relayDir, outdir),
    plugins: [],
    // CommonJS packages compiled into an ES module still call require() for Node built-ins.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    external: direct.flatMap((d) => [d, `${d}/*`]),
  });
  return resolve(outdir, 'main.js');
}
