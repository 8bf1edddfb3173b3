/**
 * The relay's public routes on node:http (no framework on the hot path): the dispatcher from a
 * route (route-table.ts) to its handler. Identity, limits and error shapes are in route-kit.ts,
 * the pipeline routes in api-route.ts, count-route.ts and playground-route.ts, the model lists in
 * model-routes.ts, the billing and stored-response routes in account-routes.ts; the pipeline itself
 * is domain/relay-request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tracingActive } from '@aigw/common/telemetry';
import { badPath, handleBilling, storedResponse } from './account-routes.ts';
import { handleApi, type RelayRouteContext } from './api-route.ts';
import { handleCount } from './count-route.ts';
import { handleGeminiModels, handleModels } from './model-routes.ts';
import { handlePlayground } from './playground-route.ts';
import { type RouteDeps, routeContext, sendError } from './route-kit.ts';
import { matchRoute, splitUrl } from './route-table.ts';

export { newRequestId, type RouteDeps, safeDecode } from './route-kit.ts';

/** Returns a handler for the relay's routes, or undefined when the path is not one of them. */
export function relayRoutes(deps: RouteDeps) {
  // Spans only where this process exports them (startTelemetry ran first, in main.ts).
  const ctx: RelayRouteContext = { ...routeContext(deps), tracing: tracingActive() };
  const track = (p: Promise<void>): true => {
    deps.track(p);
    return true;
  };

  /** Dispatches a request; false when the path is not a relay route. */
  return function dispatch(req: IncomingMessage, res: ServerResponse): boolean {
    const { path, query: url } = splitUrl(req.url ?? '/');
    const method = req.method ?? 'GET';
    const route = matchRoute(method, path);
    if (!route) return false;
    switch (route.kind) {
      case 'api':
        return track(handleApi(ctx, req, res, url, route.format, route.mode, route.route, route.gemini));
      case 'count':
        return track(handleCount(ctx, req, res, url, route.format, route.route, route.gemini));
      case 'playground':
        return track(handlePlayground(ctx, req, res));
      case 'models':
        return track(handleModels(ctx, req, res, url, route.one));
      case 'gemini-models':
        return track(handleGeminiModels(ctx, req, res, url, route.version, route.one));
      case 'stored':
        return storedResponse(ctx, track, req, res, url, path, route.method);
      case 'billing':
        return track(handleBilling(ctx, req, res, url, route.what));
      case 'bad-path':
        return badPath(res, route.format);
      case 'not-found':
        sendError(res, route.format, 404, `Invalid URL (${method} ${path})`, 'not_found');
        return true;
    }
  };
}
