import { ok } from '@aigw/common';
import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';

/** Model lists of the channel editor: /api/models and /api/channel/models. */
export function modelsRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { channels } = clients;

  api.get('/models', guard.admin, async (_req, res) => {
    const r = await channels.listModelsByType({});
    ok(res, Object.fromEntries(Object.entries(r.models).map(([type, list]) => [type, list.models])));
  });

  api.get('/channel/models', guard.admin, async (_req, res) => {
    ok(res, (await channels.listEnabledModels({})).models);
  });
}
