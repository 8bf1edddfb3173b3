import type { BuildOptions, build } from 'esbuild';

/** The esbuild options of a service bundle (outdir: `<serviceDir>/dist` unless given). */
export function bundleOptions(serviceDir: string, outdir?: string): BuildOptions;
/** esbuild as the service resolves it. */
export function esbuildOf(serviceDir: string): { build: typeof build };
