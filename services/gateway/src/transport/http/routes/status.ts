import { ok } from '@aigw/common';
import type { Router } from 'express';
import { buildPublicStatus } from '../../../domain/public-status.ts';
import type { RouteDeps } from '../deps.ts';

/** GET /api/status: the public status object, from the in-memory option copy (no call per request). */
export function statusRoutes(api: Router, { options, config, startTime }: RouteDeps): void {
  api.get('/status', (_req, res) => {
    const values = options.all();
    const secretsSet = new Set(values.EpayKey ? ['EpayKey'] : []);
    ok(res, buildPublicStatus(values, { version: config.VERSION, startTime, secretsSet }));
  });
  api.get('/notice', (_req, res) => ok(res, options.text('Notice')));
  api.get('/about', (_req, res) => ok(res, options.text('About')));
  api.get('/home_page_content', (_req, res) => ok(res, options.text('HomePageContent')));
}
