/**
 * notifyHook calls (MjNotifyEnabled): the task as JSON, POSTed with a timeout and a bounded number
 * of attempts (backoff 0.5 s, 1 s, ...). Fire and forget: a slow hook never holds up polling.
 *
 * The URL is the client's, so it must not reach inside the cluster: unless `allowPrivate`
 * (TASKS_NOTIFY_PRIVATE), an address that is loopback, private, link-local (cloud metadata),
 * carrier-grade NAT, multicast or reserved is refused, whether written as a literal or resolved
 * from a name. The check runs in the connection's own DNS lookup, so the address checked is the
 * address connected to (a name that resolves differently a second time gains nothing).
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPublicAddress, PrivateAddressError, publicOnlyLookup } from '@aigw/common';

/** One POST; resolves with the status, rejects on a refused address, a network error or the timeout. */
function post(url: URL, body: string, timeoutMs: number, allowPrivate: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!allowPrivate && isIP(host) && !isPublicAddress(host)) return reject(new PrivateAddressError(host, host));
    const options: RequestOptions = {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: timeoutMs,
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`notifyHook timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function notifier(opts: {
  attempts: number;
  timeoutMs: number;
  /** Let hooks reach loopback and private addresses (a local or single-tenant setup). */
  allowPrivate?: boolean;
  onGiveUp(url: string, err: unknown): void;
}) {
  return (raw: string, body: unknown): void => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
    const text = JSON.stringify(body);
    void (async () => {
      let last: unknown;
      for (let i = 0; i < Math.max(1, opts.attempts); i++) {
        try {
          const status = await post(url, text, opts.timeoutMs, opts.allowPrivate === true);
          if (status >= 200 && status < 300) return;
          last = new Error(`hook answered ${status}`);
        } catch (err) {
          last = err;
          // An address that is not public stays so: no retries.
          if (err instanceof PrivateAddressError) break;
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** i));
      }
      opts.onGiveUp(raw, last);
    })();
  };
}
