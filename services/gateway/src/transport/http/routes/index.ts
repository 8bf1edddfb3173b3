import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { statusRoutes } from './status.ts';

/** Mounts every /api route module. One line per module. */
export function mountRoutes(api: Router, deps: RouteDeps): void {
  statusRoutes(api, deps);
}
