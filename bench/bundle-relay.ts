// The relay as the benchmark runs it: the same esbuild bundle as services/common/bundle.mjs,
// except that packages the relay does not depend on directly are compiled in too. In the image
// those resolve from a flat node_modules (pnpm deploy, hoisted); in this workspace they are not
// resolvable from services/relay, so the benchmark cannot run dist/ as it is.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const relayDir = resolve(root, 'services/relay');
const require = createRequire(`${relayDir}/package.json`);
const { build } = require('esbuild');
const pkg = require('./package.json');
const direct = Object.keys(pkg.dependencies).filter((d) => !d.startsWith('@aigw/'));
export const outdir = resolve(relayDir, '.bench-dist');

export async function bundleRelay() {
  await build({
    entryPoints: [resolve(relayDir, 'src/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    // CommonJS packages compiled into an ES module still call require() for Node built-ins.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    external: direct.flatMap((d) => [d, `${d}/*`]),
  });
  return resolve(outdir, 'main.js');
}
