/**
 * Which relay route a method and path name: a pure lookup, so that the dispatcher only calls the
 * route's handler. The order of the checks is the routes' precedence.
 */
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import { safeDecode } from './route-kit.ts';

const MODES: Record<string, RelayMode> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
  '/v1/images/generations': 'images',
  '/v1/images/edits': 'image_edits',
  '/v1/images/variations': 'image_variations',
  '/v1/audio/speech': 'speech',
  '/v1/audio/transcriptions': 'transcriptions',
  '/v1/audio/translations': 'translations',
  '/v1/moderations': 'moderations',
  '/v1/rerank': 'rerank',
};

/** A route and what its handler needs from the path. */
export type RouteMatch =
  /** A request run through the pipeline (`route`: its metrics label). */
  | {
      kind: 'api';
      format: ClientFormat;
      mode: RelayMode;
      route: string;
      gemini?: { model: string; stream: boolean };
    }
  /** A free token count (Claude's count_tokens, Gemini's countTokens, Responses' input_tokens). */
  | { kind: 'count'; format: 'claude' | 'gemini' | 'responses'; route: string; gemini?: { model: string } }
  | { kind: 'playground' }
  | { kind: 'models'; one?: string }
  | { kind: 'gemini-models'; version: string; one?: string }
  /** /v1/responses/{id}[/input_items]: the rest of the path is checked by its handler. */
  | { kind: 'stored'; method: 'GET' | 'DELETE' }
  | { kind: 'billing'; what: 'subscription' | 'usage' }
  /** A path segment that is not valid percent-encoded UTF-8 (400). */
  | { kind: 'bad-path'; format: ClientFormat }
  /** Under a relay prefix but no route (404 in the format the prefix implies). */
  | { kind: 'not-found'; format: ClientFormat };

const GEMINI_POST = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const GEMINI_GET = /^\/(v1beta)\/models(?:\/(.+))?$/;

function postRoute(path: string): RouteMatch | undefined {
  const mode = MODES[path];
  if (mode) return { kind: 'api', format: 'openai', mode, route: path };
  if (path === '/v1/messages') return { kind: 'api', format: 'claude', mode: 'chat', route: path };
  if (path === '/v1/messages/count_tokens') return { kind: 'count', format: 'claude', route: path };
  if (path === '/v1/responses') return { kind: 'api', format: 'responses', mode: 'chat', route: path };
  // Codex's context compaction: forwarded to channels that serve the Responses API (type 1);
  // elsewhere a 400 in OpenAI's shape (README).
  if (path === '/v1/responses/compact')
    return { kind: 'api', format: 'openai', mode: 'responses_compact', route: path };
  if (path === '/v1/responses/input_tokens') return { kind: 'count', format: 'responses', route: path };
  if (path === '/pg/chat/completions') return { kind: 'playground' };
  const g = GEMINI_POST.exec(path);
  if (!g) return undefined;
  const model = safeDecode(g[2] ?? '');
  if (model === undefined) return { kind: 'bad-path', format: 'gemini' };
  if (g[3] === 'countTokens')
    return { kind: 'count', format: 'gemini', route: `/${g[1]}/models/{model}:countTokens`, gemini: { model } };
  return {
    kind: 'api',
    format: 'gemini',
    mode: 'chat',
    route: `/${g[1]}/models/{model}:${g[3]}`,
    gemini: { model, stream: g[3] === 'streamGenerateContent' },
  };
}

function getRoute(path: string): RouteMatch | undefined {
  if (path === '/v1/models') return { kind: 'models' };
  const gm = GEMINI_GET.exec(path);
  if (gm) {
    const one = gm[2] === undefined ? undefined : safeDecode(gm[2]);
    if (gm[2] !== undefined && one === undefined) return { kind: 'bad-path', format: 'gemini' };
    return one === undefined
      ? { kind: 'gemini-models', version: gm[1] as string }
      : { kind: 'gemini-models', version: gm[1] as string, one };
  }
  if (path.startsWith('/v1/models/')) {
    const one = safeDecode(path.slice('/v1/models/'.length));
    if (one === undefined) return { kind: 'bad-path', format: 'openai' };
    return { kind: 'models', one };
  }
  if (path.startsWith('/v1/responses/')) return { kind: 'stored', method: 'GET' };
  if (path === '/dashboard/billing/subscription' || path === '/v1/dashboard/billing/subscription')
    return { kind: 'billing', what: 'subscription' };
  if (path === '/dashboard/billing/usage' || path === '/v1/dashboard/billing/usage')
    return { kind: 'billing', what: 'usage' };
  return undefined;
}

/** The route of a request, or undefined when the path is not the relay's. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const found =
    method === 'POST'
      ? postRoute(path)
      : method === 'GET'
        ? getRoute(path)
        : method === 'DELETE' && path.startsWith('/v1/responses/')
          ? ({ kind: 'stored', method: 'DELETE' } as const)
          : undefined;
  if (found) return found;
  if (path.startsWith('/v1') || path.startsWith('/pg') || path.startsWith('/dashboard')) {
    const format: ClientFormat = path.startsWith('/v1beta')
      ? 'gemini'
      : path.startsWith('/v1/messages')
        ? 'claude'
        : 'openai';
    return { kind: 'not-found', format };
  }
  return undefined;
}

/** The path and the query string (without its `?`) of a request's URL. */
export function splitUrl(raw: string): { path: string; query: string } {
  const q = raw.indexOf('?');
  return q < 0 ? { path: raw, query: '' } : { path: raw.slice(0, q), query: raw.slice(q + 1) };
}
