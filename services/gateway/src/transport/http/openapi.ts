import { z } from 'zod';
import type { RouteInfo } from './route-table.ts';

/**
 * The /api contract as an OpenAPI 3.1 document, built from the mounted routes and their zod
 * schemas (the same ones that check requests), so it cannot drift from what the gateway accepts.
 * `x-min-role` carries each route's guard (0 public, 1 user, 10 admin, 100 root).
 */
type Json = Record<string, unknown>;

const toSchema = (s: z.ZodType): Json =>
  z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;

/** A schema without its `$schema` marker (OpenAPI 3.1 embeds plain JSON Schema objects). */
function strip(p: Json): Json {
  const { $schema: _s, ...rest } = p;
  return rest;
}

/** A part's schema as OpenAPI parameters (one per property; path names from the pattern). */
function parameters(where: 'path' | 'query', s: z.ZodType | undefined, path: string): Json[] {
  const schema = s ? toSchema(s) : { properties: {} };
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  if (where === 'path') {
    const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
    return names.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: strip(props[name] ?? { type: 'string' }),
    }));
  }
  return Object.entries(props).map(([name, p]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: strip(p),
  }));
}

const envelope = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { type: 'boolean' }, message: { type: 'string' }, data: {} },
};
const answer = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
});

/** An operation id from the method and path: `deleteApiRedemptionId`. */
const operationId = (method: string, path: string) =>
  `${method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

export function openApiDocument(routes: RouteInfo[], version: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) {
    const path = `/api${r.path.replace(/:(\w+)/g, '{$1}')}`;
    const guarded = r.minRole > 0;
    const op: Json = {
      operationId: operationId(r.method, path),
      'x-min-role': r.minRole,
      parameters: [...parameters('path', r.shapes?.params, r.path), ...parameters('query', r.shapes?.query, r.path)],
      responses: {
        '200': answer('success, or a business error (success false)'),
        '400': answer('malformed or invalid input'),
        ...(guarded ? { '401': answer('not logged in'), '403': answer('role too low') } : {}),
        '413': answer('body too large'),
        '429': answer('rate limited'),
      },
      ...(guarded
        ? {
            security: [
              { session: [], newApiUser: [] },
              { accessToken: [], newApiUser: [] },
            ],
          }
        : {}),
    };
    if (r.shapes?.body) {
      op.requestBody = { required: false, content: { 'application/json': { schema: strip(toSchema(r.shapes.body)) } } };
    }
    paths[path] ??= {};
    (paths[path] as Record<string, Json>)[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'AI gateway console API', version },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Envelope: envelope },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'session' },
        accessToken: { type: 'apiKey', in: 'header', name: 'Authorization' },
        newApiUser: { type: 'apiKey', in: 'header', name: 'New-Api-User' },
      },
    },
  };
}
