// Bundles a service for production: `node ../common/bundle.mjs` from services/<name>.
// Workspace packages (@aigw/*, TypeScript sources) are compiled in; every other package stays
// external and is resolved from node_modules at run time. Dynamic imports become chunks
// (splitting), so main.ts still starts OpenTelemetry before the instrumented libraries load.
// Fails when a workspace import is left in dist/.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const { build } = createRequire(`${process.cwd()}/package.json`)('esbuild');
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  splitting: true,
  outdir: 'dist',
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
});

const files = (dir) =>
  readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
const leftover = files('dist').filter((f) => /(from|import)\s*\(?\s*["']@aigw\//.test(readFileSync(f, 'utf8')));
if (leftover.length > 0) {
  console.error(`dist still imports a workspace package at run time: ${leftover.join(', ')}`);
  process.exit(1);
}
