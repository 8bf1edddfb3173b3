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
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { plainAddress } from '@aigw/common';

const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');
}

/** Whether an address is on the public internet (an IPv4-mapped IPv6 address is judged as IPv4). */
export function publicAddress(address: string): boolean {
  const a = plainAddress(address);
  const family = isIP(a);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(a, family === 6 ? 'ipv6' : 'ipv4');
}

class PrivateAddress extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(host: string, address: string) {
    super(`notifyHook ${host} is ${address}, not a public address`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses non-public answers (both the single and the `all` form net.connect uses). */
function publicLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, options.all ? [] : '', 0);
    const bad = addresses.find((a) => !publicAddress(a.address));
    if (bad) return callback(new PrivateAddress(hostname, bad.address), options.all ? [] : '', 0);
    const first = addresses[0] as LookupAddress;
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
}

/** One POST; resolves with the status, rejects on a refused address, a network error or the timeout. */
function post(url: URL, body: string, timeoutMs: number, allowPrivate: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!allowPrivate && isIP(host) && !publicAddress(host)) return reject(new PrivateAddress(host, host));
    const options: RequestOptions = {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: timeoutMs,
      ...(allowPrivate ? {} : { lookup: publicLookup as RequestOptions['lookup'] }),
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
          if (err instanceof PrivateAddress) break;
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** i));
      }
      opts.onGiveUp(raw, last);
    })();
  };
}
