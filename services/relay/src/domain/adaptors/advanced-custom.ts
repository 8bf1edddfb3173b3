/**
 * Advanced custom (type 58, new-api's): the channel's `settings.advanced_routes` map the paths
 * clients call to upstream paths, each route with its own auth:
 *
 *   {"advanced_routes": [{"incoming_path": "/v1/chat/completions", "upstream_path": "/api/chat",
 *     "models": ["gpt-4o", "re:^qwen-"], "auth": {"type": "header", "name": "X-Key", "value": "{api_key}"}}]}
 *
 * A call takes the first route whose `incoming_path` is the client's endpoint (OpenAI's `/v1/...`,
 * `/v1/responses`, Claude's `/v1/messages`, Gemini's `/v1beta/models/{model}:generateContent`,
 * streamGenerateContent matching it too) and whose `models` hold the model (exact names or
 * `re:` patterns; none: every model). `upstream_path` is a path under the channel's base URL or a
 * full http(s) URL, `{model}` replaced by the model. `auth`: absent -> bearer key; `header` ->
 * `name: value`; `query` -> `?name=value`; `none`; `{api_key}` in the value is the key. Requests
 * pass through in the client's own format (Claude calls get anthropic-version, Gemini streams
 * `:streamGenerateContent?alt=sse`). A route's `converter` (new-api's names, advanced-converters.ts)
 * sends the call upstream in another protocol through the relay's own translations (`wireFor`
 * names it; the answer comes back in the client's format, usage read from the upstream's). Calls
 * no route serves, unknown converters and converters of another kind of request are answered
 * 400 before any upstream call (a bad configuration is never retried).
 */
import type { OverriddenTarget } from '../exchange/channel-overrides.ts';
import { UpstreamFailure } from '../exchange/failure.ts';
import { convertedProtocol } from './advanced-converters.ts';
import {
  type Adaptor,
  type ChannelTarget,
  type ClientFormat,
  OPENAI_PATHS,
  type Protocol,
  RESPONSES_MODES,
  type RelayMode,
  type UpstreamTarget,
} from './types.ts';

export interface AdvancedRoute {
  incoming_path?: string;
  upstream_path?: string;
  converter?: string;
  models?: string[];
  auth?: { type?: string; name?: string; value?: string };
}

const MODEL = '{model}';

/** The path a client called, as new-api names endpoints. */
export function incomingPath(mode: RelayMode, wire: Protocol | undefined, model: string, stream: boolean): string {
  if (wire === 'claude') return '/v1/messages';
  if (wire === 'gemini') return `/v1beta/models/${model}:${stream ? 'streamGenerateContent' : 'generateContent'}`;
  if (wire === 'responses') return '/v1/responses';
  return `/v1${OPENAI_PATHS[mode]}`;
}

function matchTemplate(configured: string, path: string): boolean {
  if (!configured.includes(MODEL)) return configured === path;
  const parts = configured.split(MODEL);
  if (parts.length !== 2) return false;
  const [head = '', tail = ''] = parts;
  if (!path.startsWith(head) || !path.endsWith(tail) || path.length < head.length + tail.length) return false;
  const name = path.slice(head.length, path.length - tail.length);
  return name !== '' && !name.includes('/');
}

function matchPath(configured: string, path: string): boolean {
  if (matchTemplate(configured, path)) return true;
  return (
    configured.includes(':generateContent') &&
    matchTemplate(configured.replace(':generateContent', ':streamGenerateContent'), path)
  );
}

function matchModel(models: string[] | undefined, model: string): boolean {
  const rules = (models ?? []).map((m) => m.trim()).filter(Boolean);
  if (rules.length === 0) return true;
  return rules.some((rule) => {
    if (!rule.startsWith('re:')) return rule === model;
    try {
      return rule.length > 3 && new RegExp(rule.slice(3)).test(model);
    } catch {
      return false;
    }
  });
}

/** The first route serving a path and model. */
export function routeFor(routes: AdvancedRoute[], path: string, model: string): AdvancedRoute | undefined {
  return routes.find((r) => matchPath(String(r.incoming_path ?? '').trim(), path) && matchModel(r.models, model));
}

const refuse = (message: string) => new UpstreamFailure(400, message, 'refused');

function routeUrl(route: AdvancedRoute, base: string, model: string, wire: Protocol | undefined, stream: boolean): URL {
  const path = String(route.upstream_path ?? '')
    .trim()
    .replaceAll(MODEL, model);
  let url: URL;
  if (path.startsWith('/') && !path.startsWith('//')) {
    if (!base) throw refuse('channel base URL is required when advanced custom upstream path is relative');
    let b: URL;
    try {
      b = new URL(base);
    } catch {
      throw refuse('channel base URL must be a full URL when advanced custom upstream path is relative');
    }
    const p = new URL(path, 'http://x');
    b.pathname = `${b.pathname.replace(/\/+$/, '')}/${p.pathname.replace(/^\/+/, '')}`;
    b.search = p.search;
    url = b;
  } else {
    try {
      url = new URL(path);
    } catch {
      throw refuse('advanced custom upstream path must be a full URL or a path starting with /');
    }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse('advanced custom upstream path must use http or https');
  if (wire === 'gemini' && stream) {
    url.pathname = url.pathname.replace(':generateContent', ':streamGenerateContent');
    if (url.pathname.includes(':streamGenerateContent')) url.searchParams.set('alt', 'sse');
  }
  return url;
}

/** The route serving a call and the protocol its converter sends it in (undefined: passthrough). */
function resolve(ch: ChannelTarget, mode: RelayMode, format: ClientFormat, model: string, stream: boolean) {
  const routes = (ch as OverriddenTarget).overrides?.other.advanced_routes;
  if (!Array.isArray(routes) || routes.length === 0)
    throw refuse('advanced_custom is required: the channel has no advanced_routes');
  const path = incomingPath(mode, format, model, stream);
  const route = routeFor(routes as AdvancedRoute[], path, model);
  if (!route)
    throw new UpstreamFailure(400, `advanced custom channel does not support request path ${path} for model ${model}`);
  return { route, converted: convertedProtocol(String(route.converter ?? '').trim(), mode, format) };
}

function wireFor(ch: ChannelTarget, mode: RelayMode, format: ClientFormat, model: string, stream: boolean) {
  try {
    return resolve(ch, mode, format, model, stream).converted;
  } catch (err) {
    // target() refuses the call with the same failure.
    if (err instanceof UpstreamFailure) return undefined;
    throw err;
  }
}

function target(
  ch: ChannelTarget,
  mode: RelayMode,
  model: string,
  stream: boolean,
  wire?: Protocol,
  format?: ClientFormat,
): UpstreamTarget {
  // Without the client's format (the Responses API's side routes), the call speaks its own.
  const { route } = resolve(ch, mode, format ?? ((wire ?? 'openai') as ClientFormat), model, stream);
  const url = routeUrl(route, ch.baseUrl.trim(), model, wire, stream);
  const headers: Record<string, string> = {};
  const auth = route.auth;
  const value = String(auth?.value ?? '').replaceAll('{api_key}', ch.key);
  const name = String(auth?.name ?? '').trim();
  switch (auth ? String(auth.type ?? '').trim() : 'bearer') {
    case 'bearer':
      headers.authorization = `Bearer ${ch.key}`;
      break;
    case 'none':
      break;
    case 'header':
      if (!name) throw refuse('advanced custom header auth needs a name');
      headers[name.toLowerCase()] = value;
      break;
    case 'query':
      if (!name) throw refuse('advanced custom query auth needs a name');
      url.searchParams.set(name, value);
      break;
    default:
      throw refuse(`invalid advanced custom auth type: ${String(auth?.type)}`);
  }
  if (wire === 'claude') headers['anthropic-version'] ??= '2023-06-01';
  return { url: url.toString(), headers };
}

export const advancedCustom: Adaptor = {
  name: 'Advanced Custom',
  protocol: 'openai',
  modes: RESPONSES_MODES,
  defaultBaseUrl: '',
  speaks: new Set<Protocol>(['responses', 'claude', 'gemini']),
  target,
  wireFor,
};
