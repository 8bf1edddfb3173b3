import { ok } from '@aigw/common';
import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { modelMetaRoutes } from './model-meta.ts';

/** Model lists of the channel editor (/api/models, /api/channel/models) and the model catalogue. */
export function modelsRoutes(api: Router, deps: RouteDeps): void {
  const { clients, guard } = deps;
  const { channels } = clients;
  // First: GET /models/ (the catalogue) must not reach GET /models.
  modelMetaRoutes(api, deps);

  api.get('/models', guard.admin, async (_req, res) => {
    const r = await channels.listModelsByType({});
    ok(res, Object.fromEntries(Object.entries(r.models).map(([type, list]) => [type, list.models])));
  });

  api.get('/channel/models', guard.admin, async (_req, res) => {
    ok(res, (await channels.listEnabledModels({})).models);
  });
}
