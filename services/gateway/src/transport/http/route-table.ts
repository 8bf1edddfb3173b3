import type { Router } from 'express';
import type { Shapes } from './validate.ts';

/** One /api route as mounted: what the OpenAPI document and the role matrix test are built from. */
export interface RouteInfo {
  method: string;
  /** Express pattern below /api, e.g. `/user/:id`. */
  path: string;
  /** Least role the guard admits (1 user, 10 admin, 100 root); 0 for routes without a guard. */
  minRole: number;
  /** The declared input of the route's validator, when it has one. */
  shapes?: Shapes;
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean>; stack: { handle: unknown }[] };
}

/** Reads the routes of an Express router, in mount order (the order requests are matched). */
export function routeTable(router: Router): RouteInfo[] {
  const out: RouteInfo[] = [];
  for (const layer of router.stack as Layer[]) {
    const route = layer.route;
    if (!route) continue;
    let minRole = 0;
    let shapes: Shapes | undefined;
    for (const { handle } of route.stack) {
      const h = handle as { minRole?: number; shapes?: Shapes };
      if (typeof h.minRole === 'number') minRole = Math.max(minRole, h.minRole);
      if (h.shapes) shapes = h.shapes;
    }
    for (const [method, on] of Object.entries(route.methods)) {
      if (on && method !== '_all') out.push({ method: method.toUpperCase(), path: route.path, minRole, shapes });
    }
  }
  return out;
}
