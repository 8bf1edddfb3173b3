/**
 * notifyHook calls (MjNotifyEnabled): the task as JSON, POSTed with a timeout and a bounded number
 * of attempts (backoff 0.5 s, 1 s, ...). Fire and forget: a slow hook never holds up polling.
 */
export function notifier(opts: { attempts: number; timeoutMs: number; onGiveUp(url: string, err: unknown): void }) {
  return (url: string, body: unknown): void => {
    if (!/^https?:\/\//i.test(url)) return;
    const text = JSON.stringify(body);
    void (async () => {
      let last: unknown;
      for (let i = 0; i < Math.max(1, opts.attempts); i++) {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: text,
            signal: AbortSignal.timeout(opts.timeoutMs),
          });
          await res.arrayBuffer().catch(() => undefined);
          if (res.ok) return;
          last = new Error(`hook answered ${res.status}`);
        } catch (err) {
          last = err;
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** i));
      }
      opts.onGiveUp(url, last);
    })();
  };
}
