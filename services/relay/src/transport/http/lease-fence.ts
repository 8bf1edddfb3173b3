/**
 * The relay's side of its lease (docs/security.md, "Lease lapse"). Billing gives back the holds
 * of a relay process whose lease lapsed (RELAY_LEASE_LAPSE_MS without a renewal), placed before the
 * lease stopped moving. A relay that cannot renew (Redis out of its reach while billing still reads
 * it, or a stuck event loop) is fenced from RELAY_LEASE_FENCE_MS, half the lapse: it then ends
 * the requests in flight that hold a reservation, so no request is still running when its hold
 * is given back; their usage so far is billed against the hold they still have. Requests admitted
 * while fenced hold as usual: their holds were placed after the lease stopped moving and are
 * never given back by the lapse.
 */
export interface LeaseFence {
  /** Registers a request in flight; `cut` ends it. Returns the removal (call it when it ends). */
  watch(requestId: string, cut: () => void, held?: boolean): () => void;
  /** Marks a watched request as holding a reservation (its pre-consume answered). */
  held(requestId: string): void;
  /** Ends every watched request holding a reservation; returns how many. */
  cutHeld(): number;
  /** Runs `listener` at each cutHeld (the wallet slices close: their holds may be given back). */
  onCut(listener: () => void): void;
}

export function leaseFence(): LeaseFence {
  const inFlight = new Map<string, { cut: () => void; held: boolean }>();
  const listeners: (() => void)[] = [];
  return {
    onCut(listener) {
      listeners.push(listener);
    },
    watch(requestId, cut, held = false) {
      inFlight.set(requestId, { cut, held });
      return () => inFlight.delete(requestId);
    },
    held(requestId) {
      const e = inFlight.get(requestId);
      if (e) e.held = true;
    },
    cutHeld() {
      for (const l of listeners) l();
      let n = 0;
      for (const [id, e] of inFlight) {
        if (!e.held) continue;
        inFlight.delete(id);
        e.cut();
        n++;
      }
      return n;
    },
  };
}
