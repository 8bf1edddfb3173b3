import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { Router } from 'express';
import {
  checkConsoleSetting,
  fetchUptime,
  listOf,
  PANEL_LIST_KEYS,
  type PanelListKey,
  panelsOf,
  type UptimeGroup,
} from '../../../domain/console-panels.ts';
import type { RouteDeps } from '../deps.ts';

/** How long the status pages' answer is kept (one fetch per replica at most this often). */
const UPTIME_CACHE_MS = 30_000;
const UPTIME_TIMEOUT_MS = 5_000;

/**
 * The dashboard panels (new-api's console settings): GET /api/console/panels (announcements, API
 * info, FAQ) and GET /api/uptime/status (the Uptime Kuma status pages, fetched here) for every
 * logged-in user; and the check of a panel list before PUT /api/option/ saves it. Mounted before
 * optionRoutes.
 */
export function consolePanelRoutes(api: Router, { guard, options, config, logger }: RouteDeps): void {
  // A panel list is checked here (bad JSON, too many entries, a missing field: 400 with the
  // reason), after the root guard; the save itself is option.ts's route (not a second route:
  // the route table keeps one entry per method and path).
  api.use('/option', (req, res, next) => {
    if (req.method !== 'PUT' || req.path !== '/') return next();
    const b = req.body as { key?: unknown; value?: unknown } | undefined;
    const key = typeof b?.key === 'string' ? b.key : '';
    if (!Object.hasOwn(PANEL_LIST_KEYS, key)) return next();
    guard.root(req, res, (err?: unknown) => {
      if (err) return next(err);
      const v = b?.value;
      const value = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
      try {
        checkConsoleSetting(key as PanelListKey, value);
      } catch (e) {
        return next(invalid((e as Error).message));
      }
      next();
    });
  });

  api.get('/console/panels', guard.user, (_req, res) => {
    ok(res, panelsOf(options as unknown as Parameters<typeof panelsOf>[0]));
  });

  let cached: { config: string; at: number; data: Promise<UptimeGroup[]> } | undefined;
  api.get('/uptime/status', guard.user, async (_req, res) => {
    const raw = options.text('console_setting.uptime_kuma_groups');
    if (!options.bool('console_setting.uptime_kuma_enabled') || !raw) return ok(res, []);
    const now = Date.now();
    if (!cached || cached.config !== raw || now - cached.at > UPTIME_CACHE_MS) {
      cached = {
        config: raw,
        at: now,
        data: fetchUptime(listOf(raw), {
          timeoutMs: UPTIME_TIMEOUT_MS,
          allowPrivate: config.UPTIME_KUMA_ALLOW_PRIVATE === 'true',
          onError: (url, err) => logger.warn({ url, err: (err as Error).message }, 'uptime kuma status page failed'),
        }),
      };
    }
    ok(res, await cached.data);
  });
}
