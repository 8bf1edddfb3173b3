/** A stored drawing task in midjourney-proxy's task shape (fetch, list-by-condition, notifyHook). */
import type { MjTaskDoc } from '../data/mj-task-repository.ts';

function parse(text: string, fallback: unknown): unknown {
  if (!text) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/**
 * `forwardBase` set (MjForwardUrlEnabled): image URLs point at this service's `/mj/image/{id}`
 * instead of the upstream's, so clients never see the upstream's address.
 */
export function mjTaskView(t: MjTaskDoc, forwardBase: string | undefined): Record<string, unknown> {
  const imageUrl = t.image_url && forwardBase ? `${forwardBase}/mj/image/${t.mj_id}` : t.image_url;
  return {
    id: t.mj_id,
    action: t.action,
    customId: t.custom_id,
    botType: '',
    prompt: t.prompt,
    promptEn: t.prompt_en,
    description: t.description,
    state: t.state,
    submitTime: t.submit_time,
    startTime: t.start_time,
    finishTime: t.finish_time,
    imageUrl,
    status: t.status,
    progress: t.progress,
    failReason: t.fail_reason,
    buttons: parse(t.buttons, []),
    maskBase64: '',
    properties: parse(t.properties, {}),
  };
}
