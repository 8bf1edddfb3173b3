/**
 * A channel's param_override applied to the upstream body (new-api's semantics): a plain object
 * sets its top-level keys as given; {"operations": [...]} runs operations on dotted paths
 * ("a.b.0.c", "\." for a literal dot, "-1" for the last element) in order, each optionally under
 * conditions on the body or the request's context (model, upstream_model, original_model,
 * is_stream, retry_index). The channels service checked the shape on save.
 */
import { UpstreamFailure } from './failure.ts';

type Json = Record<string, unknown>;

export interface ParamCondition {
  path: string;
  mode: string;
  value?: unknown;
  invert?: boolean;
  pass_missing_key?: boolean;
}

export interface ParamOperation {
  path?: string;
  mode: string;
  value?: unknown;
  keep_origin?: boolean;
  from?: string;
  to?: string;
  conditions?: ParamCondition[];
  logic?: string;
}

export interface ParamOverride {
  /** Top-level keys set as given (the legacy form, and the keys beside `operations`). */
  set: Json;
  operations: ParamOperation[];
}

/** A param_override text parsed once per snapshot; undefined when empty or not an object. */
export function parseParamOverride(text: string | undefined): ParamOverride | undefined {
  if (!text?.trim()) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const { operations, ...set } = o as Json;
  const ops = Array.isArray(operations) ? (operations as ParamOperation[]) : [];
  if (Object.keys(set).length === 0 && ops.length === 0) return undefined;
  return { set, operations: ops };
}

/** Splits a path on unescaped dots. */
function segments(path: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (c === '\\' && i + 1 < path.length) {
      cur += path[++i];
      continue;
    }
    if (c === '.') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

const isIndex = (s: string) => /^-?\d+$/.test(s);

function child(node: unknown, seg: string): { found: boolean; value: unknown } {
  if (Array.isArray(node) && isIndex(seg)) {
    const i = Number(seg) < 0 ? node.length + Number(seg) : Number(seg);
    return i >= 0 && i < node.length ? { found: true, value: node[i] } : { found: false, value: undefined };
  }
  if (node && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, seg)) {
    return { found: true, value: (node as Json)[seg] };
  }
  return { found: false, value: undefined };
}

/** The value at a path (found false when any step is missing). */
export function getPath(root: unknown, path: string): { found: boolean; value: unknown } {
  return walk(root, segments(path));
}

function walk(root: unknown, segs: string[]): { found: boolean; value: unknown } {
  let node: unknown = root;
  for (const seg of segs) {
    const next = child(node, seg);
    if (!next.found) return next;
    node = next.value;
  }
  return { found: true, value: node };
}

/** Sets a value, creating objects (arrays for numeric steps) on the way; "-1" past the end appends. */
export function setPath(root: Json, path: string, value: unknown): void {
  const segs = segments(path);
  let node: unknown = root;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i] as string;
    const last = i === segs.length - 1;
    const nextIsIndex = !last && isIndex(segs[i + 1] as string);
    if (Array.isArray(node) && isIndex(seg)) {
      let idx = Number(seg) < 0 ? node.length + Number(seg) : Number(seg);
      if (idx < 0) idx = node.length;
      if (last) {
        node[idx] = value;
        return;
      }
      if (node[idx] === null || typeof node[idx] !== 'object') node[idx] = nextIsIndex ? [] : {};
      node = node[idx];
      continue;
    }
    const obj = node as Json;
    if (last) {
      obj[seg] = value;
      return;
    }
    if (obj[seg] === null || typeof obj[seg] !== 'object') obj[seg] = nextIsIndex ? [] : {};
    node = obj[seg];
  }
}

/** Removes the key or array element at a path; false when there was none. */
export function deletePath(root: Json, path: string): boolean {
  const segs = segments(path);
  const leaf = segs.pop() as string;
  const parent = walk(root, segs);
  if (!parent.found) return false;
  const p = parent.value;
  if (Array.isArray(p) && isIndex(leaf)) {
    const i = Number(leaf) < 0 ? p.length + Number(leaf) : Number(leaf);
    if (i < 0 || i >= p.length) return false;
    p.splice(i, 1);
    return true;
  }
  if (p && typeof p === 'object' && Object.hasOwn(p, leaf)) {
    delete (p as Json)[leaf];
    return true;
  }
  return false;
}

function compare(actual: unknown, expected: unknown, mode: string): boolean {
  switch (mode) {
    case 'full':
      return JSON.stringify(actual) === JSON.stringify(expected);
    case 'prefix':
      return String(actual).startsWith(String(expected));
    case 'suffix':
      return String(actual).endsWith(String(expected));
    case 'contains':
      return typeof actual === 'object'
        ? JSON.stringify(actual).includes(String(expected))
        : String(actual).includes(String(expected));
    default: {
      if (typeof actual !== 'number' || typeof expected !== 'number') return false;
      if (mode === 'gt') return actual > expected;
      if (mode === 'gte') return actual >= expected;
      if (mode === 'lt') return actual < expected;
      return mode === 'lte' && actual <= expected;
    }
  }
}

function conditionsHold(body: Json, context: Json, op: ParamOperation): boolean {
  const conds = op.conditions ?? [];
  if (conds.length === 0) return true;
  const results = conds.map((c) => {
    let at = getPath(body, c.path);
    if (!at.found) at = getPath(context, c.path);
    if (!at.found) return c.pass_missing_key === true;
    const ok = compare(at.value, c.value, c.mode.toLowerCase());
    return c.invert ? !ok : ok;
  });
  return String(op.logic ?? 'OR').toUpperCase() === 'AND' ? results.every(Boolean) : results.some(Boolean);
}

const asText = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function editString(body: Json, path: string, edit: (s: string) => string): void {
  const at = getPath(body, path);
  if (at.found && typeof at.value === 'string') setPath(body, path, edit(at.value));
}

function modify(body: Json, op: ParamOperation, path: string, prepend: boolean): void {
  const at = getPath(body, path);
  const cur = at.value;
  if (!at.found) setPath(body, path, op.value);
  else if (Array.isArray(cur)) {
    const add = Array.isArray(op.value) ? op.value : [op.value];
    setPath(body, path, prepend ? [...add, ...cur] : [...cur, ...add]);
  } else if (typeof cur === 'string') {
    setPath(body, path, prepend ? asText(op.value) + cur : cur + asText(op.value));
  } else if (cur && typeof cur === 'object' && op.value && typeof op.value === 'object' && !Array.isArray(op.value)) {
    const value = op.value as Json;
    setPath(body, path, op.keep_origin ? { ...value, ...(cur as Json) } : { ...(cur as Json), ...value });
  }
}

/** return_error: the request is refused with the operation's message and status (no retry by default). */
function returnError(value: unknown): UpstreamFailure {
  const v = typeof value === 'string' ? { message: value } : ((value ?? {}) as Json);
  const status = Number(v.status_code ?? v.status ?? 400);
  const message = String(v.message ?? v.msg ?? '').trim() || 'request blocked by param override';
  const noRetry = v.skip_retry !== false;
  return new UpstreamFailure(
    Number.isInteger(status) && status >= 100 && status <= 599 ? status : 400,
    message,
    noRetry ? 'refused' : 'http',
  );
}

/**
 * Applies an override to a parsed upstream body (changed in place) and to the header overrides of
 * the call (set_header / delete_header). Throws UpstreamFailure for return_error.
 */
export function applyParamOverride(
  body: Json,
  override: ParamOverride,
  context: Json,
  headers: Record<string, string | null>,
): void {
  for (const [k, v] of Object.entries(override.set)) body[k] = v;
  for (const op of override.operations) {
    if (!conditionsHold(body, context, op)) continue;
    const path = op.path ?? '';
    const value = op.value;
    switch (op.mode) {
      case 'set':
        if (!(op.keep_origin && getPath(body, path).found)) setPath(body, path, value);
        break;
      case 'delete':
        deletePath(body, path);
        break;
      case 'move':
      case 'copy': {
        const from = getPath(body, op.from ?? '');
        if (!from.found) break;
        if (op.keep_origin && getPath(body, op.to ?? '').found) break;
        if (op.mode === 'move') deletePath(body, op.from ?? '');
        setPath(body, op.to ?? '', structuredClone(from.value));
        break;
      }
      case 'prepend':
      case 'append':
        modify(body, op, path, op.mode === 'prepend');
        break;
      case 'trim_prefix':
        editString(body, path, (s) => (s.startsWith(asText(value)) ? s.slice(asText(value).length) : s));
        break;
      case 'trim_suffix':
        editString(body, path, (s) => (s.endsWith(asText(value)) ? s.slice(0, s.length - asText(value).length) : s));
        break;
      case 'ensure_prefix':
        editString(body, path, (s) => (s.startsWith(asText(value)) ? s : asText(value) + s));
        break;
      case 'ensure_suffix':
        editString(body, path, (s) => (s.endsWith(asText(value)) ? s : s + asText(value)));
        break;
      case 'trim_space':
        editString(body, path, (s) => s.trim());
        break;
      case 'to_lower':
        editString(body, path, (s) => s.toLowerCase());
        break;
      case 'to_upper':
        editString(body, path, (s) => s.toUpperCase());
        break;
      case 'replace':
        if (op.from) editString(body, path, (s) => s.replaceAll(op.from as string, op.to ?? ''));
        break;
      case 'regex_replace':
        if (op.from) editString(body, path, (s) => s.replace(new RegExp(op.from as string, 'g'), op.to ?? ''));
        break;
      case 'return_error':
        throw returnError(value);
      case 'set_header': {
        const name = path.toLowerCase();
        if (!(op.keep_origin && headers[name] != null)) headers[name] = asText(value);
        break;
      }
      case 'delete_header':
        headers[path.toLowerCase()] = null;
        break;
    }
  }
}
