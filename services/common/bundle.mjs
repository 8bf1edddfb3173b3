// Bundles a service for production: `node ../common/bundle.mjs` from services/<name>.
// Workspace packages (@aigw/*, TypeScript sources) are compiled in; every other package stays
// external and is resolved from node_modules at run time. Dynamic imports become chunks
// (splitting), so main.ts still starts OpenTelemetry before the instrumented libraries load.
// Fails when a workspace import is left in dist/.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The esbuild options of a service bundle (bench/bundle-relay.ts builds a variant of them). */
export function bundleOptions(serviceDir, outdir = join(serviceDir, 'dist')) {
  return {
    entryPoints: [join(serviceDir, 'src/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    plugins: [
      {
        name: 'external-except-workspace',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@aigw/') ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  };
}

/** esbuild as the service resolves it. */
export function esbuildOf(serviceDir) {
  return createRequire(join(serviceDir, 'package.json'))('esbuild');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const dir = process.cwd();
  rmSync('dist', { recursive: true, force: true });
  await esbuildOf(dir).build(bundleOptions(dir));

  const files = (d) =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
  const leftover = files('dist').filter((f) => /(from|import)\s*\(?\s*["']@aigw\//.test(readFileSync(f, 'utf8')));
  if (leftover.length > 0) {
    console.error(`dist still imports a workspace package at run time: ${leftover.join(', ')}`);
    process.exit(1);
  }
}
