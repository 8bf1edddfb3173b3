/**
 * The rules of the midjourney-proxy API that do not touch I/O: which action a submit is, the
 * model (and so the per-call price) of an action, what of the client's body goes upstream, and
 * the upstream's submit codes.
 */

/** Submit kinds of `/mj/submit/{kind}`. */
export const SUBMIT_KINDS = [
  'imagine',
  'action',
  'change',
  'simple-change',
  'blend',
  'describe',
  'modal',
  'shorten',
  'upload-discord-images',
  /** `/mj/insight-face/swap` (midjourney-proxy-plus), not under /submit. */
  'swap-face',
] as const;
export type SubmitKind = (typeof SUBMIT_KINDS)[number];

/** The price model of each action (reference-behaviour per-call prices; mj_ + lower-case action). */
export function modelOfAction(action: string): string {
  if (action === 'SWAP_FACE') return 'swap_face';
  return `mj_${action.toLowerCase()}`;
}

/** The action a button's custom id performs (midjourney-proxy's MJ::... ids). */
export function actionOfCustomId(customId: string): string | undefined {
  const id = customId.toLowerCase();
  if (id.includes('mj::customzoom')) return 'CUSTOM_ZOOM';
  if (id.includes('mj::inpaint')) return 'INPAINT';
  if (id.includes('mj::outpaint')) return 'ZOOM';
  if (id.includes('::upsample')) return 'UPSCALE';
  if (id.includes('::high_variation')) return 'HIGH_VARIATION';
  if (id.includes('::low_variation')) return 'LOW_VARIATION';
  if (id.includes('::variation')) return 'VARIATION';
  if (id.includes('::reroll')) return 'REROLL';
  if (id.includes('::pan_')) return 'PAN';
  if (id.startsWith('mj::')) return 'CUSTOM';
  return undefined;
}

/** `change`'s action names; `simple-change`'s "<taskId> U1|V2|R". */
export function parseSimpleChange(content: string): { taskId: string; action: string; index: number } | undefined {
  const m = /^\s*(\S+)\s+([UVR])(\d?)\s*$/i.exec(content);
  if (!m) return undefined;
  const letter = (m[2] as string).toUpperCase();
  const action = letter === 'U' ? 'UPSCALE' : letter === 'V' ? 'VARIATION' : 'REROLL';
  const index = m[3] ? Number(m[3]) : 0;
  if (action !== 'REROLL' && (index < 1 || index > 4)) return undefined;
  return { taskId: m[1] as string, action, index };
}

const MODE_FLAG = /\s*--(fast|relax|turbo)\b/gi;

/** Removes --fast/--relax/--turbo from a prompt (MjModeClearEnabled). */
export function clearMode(prompt: string): string {
  return prompt.replace(MODE_FLAG, '').trim();
}

/** Submit codes the reference bills: 1 submitted, 21 exists (treated as ok), 22 queued. */
export function submitAccepted(code: number): boolean {
  return code === 1 || code === 21 || code === 22;
}

/** Whether a status is final. */
export const isFinal = (status: string) => status === 'SUCCESS' || status === 'FAILURE';

/**
 * The body sent upstream: the client's body without notifyHook (this service calls hooks itself,
 * MjNotifyEnabled), without accountFilter unless MjAccountFilterEnabled, and with the mode flags
 * cleared from the prompt when MjModeClearEnabled.
 */
export function upstreamBody(
  body: Record<string, unknown>,
  opts: { accountFilter: boolean; modeClear: boolean },
): Record<string, unknown> {
  const { notifyHook: _hook, accountFilter, ...rest } = body;
  const out: Record<string, unknown> = { ...rest };
  if (opts.accountFilter && accountFilter !== undefined) out.accountFilter = accountFilter;
  if (opts.modeClear && typeof out.prompt === 'string') out.prompt = clearMode(out.prompt);
  return out;
}

/** The mode of a path prefix (/fast/mj, /relax/mj, /turbo/mj); undefined for plain /mj. */
export function modeOfPath(path: string): { mode?: string; rest: string } | undefined {
  const m = /^\/(?:(fast|relax|turbo)\/)?mj(\/.*)?$/.exec(path);
  if (!m) return undefined;
  return { ...(m[1] ? { mode: m[1] } : {}), rest: m[2] ?? '/' };
}
