import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The seven services of the local stack, in start order, with their ports (docs/development.md).
 * The gateway starts last so the console only answers once its peers do.
 */
export interface ServiceSpec {
  name: string;
  httpPort: number;
  grpcPort?: number;
  /** Ops port (/readyz, /metrics) of the services with a public HTTP port; else httpPort serves them. */
  metricsPort?: number;
}

export const SERVICES: ServiceSpec[] = [
  { name: 'users', httpPort: 9465, grpcPort: 50051 },
  { name: 'channels', httpPort: 9466, grpcPort: 50052 },
  { name: 'billing', httpPort: 9467, grpcPort: 50053 },
  { name: 'logs', httpPort: 9469, grpcPort: 50055 },
  { name: 'relay', httpPort: 3001, grpcPort: 50054, metricsPort: 9468 },
  { name: 'tasks', httpPort: 3002, grpcPort: 50056, metricsPort: 9470 },
  { name: 'gateway', httpPort: 3000, metricsPort: 9464 },
];

/** Peer addresses every service receives. */
export const PEERS: Record<string, string> = {
  USERS_ADDR: '127.0.0.1:50051',
  CHANNELS_ADDR: '127.0.0.1:50052',
  BILLING_ADDR: '127.0.0.1:50053',
  RELAY_ADDR: '127.0.0.1:50054',
  LOGS_ADDR: '127.0.0.1:50055',
  TASKS_ADDR: '127.0.0.1:50056',
  RELAY_HTTP_URL: 'http://127.0.0.1:3001',
  TASKS_HTTP_URL: 'http://127.0.0.1:3002',
};

/**
 * The Node flags a service declares for itself (package.json "aigw.nodeFlags"): the local start
 * and the benchmark pass them, the Helm chart sets the same list (<service>.nodeFlags; a test
 * keeps the two equal).
 */
export function nodeFlagsOf(name: string): string[] {
  const file = fileURLToPath(new URL(`../../../services/${name}/package.json`, import.meta.url));
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { aigw?: { nodeFlags?: string[] } };
  return pkg.aigw?.nodeFlags ?? [];
}
