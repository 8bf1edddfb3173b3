import type { Request } from 'express';

/**
 * Small JSON <-> gRPC helpers of the channel, token, redemption, top-up and pricing routes: the
 * /api speaks snake_case (spec field names), the generated messages camelCase.
 */

/** A generated message (or plain object) as snake_case JSON, without protobuf-es internals. */
export function snake(msg: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg)) {
    if (k.startsWith('$')) continue;
    out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  }
  return out;
}

/** The body as a plain object. */
export function body(req: Request): Record<string, unknown> {
  const b: unknown = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

/** A text field: undefined when absent. */
export function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The paged answer of the spec: {items, total, page, page_size}. */
export function pageAnswer(items: object[], page?: { page: number; pageSize: number; total: number }) {
  return {
    items: items.map(snake),
    total: page?.total ?? items.length,
    page: page?.page ?? 1,
    page_size: page?.pageSize ?? 10,
  };
}

/** The caller, set by a guard. */
export function caller(req: Request) {
  const u = req.user;
  if (!u) throw new Error('route without a guard');
  return u;
}

/** The caller as a gRPC Actor. */
export const actorOf = (req: Request) => {
  const u = caller(req);
  return { userId: u.id, role: u.role, username: u.username };
};

/** The fields of `o` that are set ("only the fields that are present change"). */
export function defined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
