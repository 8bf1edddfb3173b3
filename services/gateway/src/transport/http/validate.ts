import { BadRequest, badRequest } from '@aigw/common';
import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { ownMessages } from './schemas.ts';

/**
 * The one way an /api route reads its input: a declared zod schema per part (path params, query,
 * JSON body), checked by a middleware placed after the route's guard (so an anonymous caller
 * still gets 401 before any 400). A failure answers 400 with the field and the reason; a handler
 * only sees parsed, typed values (`input(req, shapes)`), never the raw body, so no client-built
 * object reaches a gRPC call or a database filter. The same schemas build /api/openapi.json.
 */
export interface Shapes {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
}

type Parsed<S extends Shapes> = {
  [K in keyof S]: S[K] extends z.ZodType ? z.output<S[K]> : never;
};

/** The checking middleware, carrying its shapes (read by the route table and the OpenAPI document). */
export type Validator<S extends Shapes> = RequestHandler & { shapes: S };

const PARSED = Symbol('parsed input');
const zh = z.locales.zhCN().localeError;
const LABEL: Record<keyof Shapes, string> = { params: '路径参数', query: '查询参数', body: '请求体' };

/** The first issue as one clear sentence: where, which field, what is wrong. */
function messageOf(part: keyof Shapes, err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return `${LABEL[part]}无效`;
  if (ownMessages.has(issue.message)) return issue.message;
  const field = issue.path.map(String).join('.');
  return field ? `${LABEL[part]} ${field} 无效：${issue.message}` : `${LABEL[part]}无效：${issue.message}`;
}

/** A request that carries a body (whatever Express made of it). */
const hasBody = (req: Request) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** Declares and checks a route's input. */
export function validate<S extends Shapes>(shapes: S): Validator<S> {
  const handler: RequestHandler = (req, _res, next) => {
    const out: Record<string, unknown> = {};
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = shapes[part];
      if (!schema) continue;
      let value: unknown = req[part];
      if (part === 'body' && value === undefined) {
        // express.json parses only JSON; any other body is refused rather than read as empty.
        if (hasBody(req)) throw new BadRequest(415, '请求体必须是 JSON（Content-Type: application/json）');
        value = {};
      }
      const r = schema.safeParse(value, { error: zh });
      if (!r.success) throw badRequest(messageOf(part, r.error));
      out[part] = r.data;
    }
    (req as unknown as Record<symbol, unknown>)[PARSED] = out;
    next();
  };
  return Object.assign(handler, { shapes });
}

/** The input a route's validator parsed (typed by its shapes). */
export function input<S extends Shapes>(req: Request, _v: Validator<S>): Parsed<S> {
  const parsed = (req as unknown as Record<symbol, unknown>)[PARSED];
  if (!parsed) throw new Error('route without a validator');
  return parsed as Parsed<S>;
}
