/**
 * Vitest global setup of the integration and e2e projects: provides real servers once per run
 * (environment URLs, testcontainers, or the local servers) and hands their URLs to the test
 * workers through the environment.
 */
import { infraEnv, provideInfra } from '../src/index.ts';

export default async function setup(): Promise<() => Promise<void>> {
  const infra = await provideInfra();
  Object.assign(process.env, infraEnv(infra));
  return () => infra.stop();
}
