import type { Usage } from '../protocols/openai.ts';

/** What one attempt produced. */
export interface AttemptResult {
  usage: Usage;
  /** True when the upstream reported no usage and the relay estimated it. */
  estimated: boolean;
  /** Milliseconds from the request to the first streamed token (0 when not streamed). */
  firstTokenMs: number;
  /** The client went away before the answer ended. */
  aborted: boolean;
  /** Billable units of per-call priced modes (images). */
  units: number;
  /** The id under which the upstream keeps the answer (Responses with store). */
  stateId?: string;
}

/** The result of an attempt the client walked away from before anything was produced. */
export function abortedResult(): AttemptResult {
  return { usage: { promptTokens: 0, completionTokens: 0 }, estimated: true, firstTokenMs: 0, aborted: true, units: 0 };
}
