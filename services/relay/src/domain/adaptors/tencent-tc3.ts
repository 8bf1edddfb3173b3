/**
 * Tencent Cloud API v3 signing (TC3-HMAC-SHA256): a canonical request over content-type and
 * host, a string to sign with the request time and `{date}/{service}/tc3_request`, and an
 * HMAC-SHA256 chain from "TC3" + SecretKey through the UTC date and the service.
 */
import { createHash, createHmac } from 'node:crypto';

const sha256Hex = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmac = (k: Buffer | string, d: string) => createHmac('sha256', k).update(d).digest();

/** The X-TC-* and Authorization headers of one JSON POST to `https://{host}/`. */
export function signTc3(req: {
  host: string;
  service: string;
  action: string;
  version: string;
  region?: string;
  body: string;
  secretId: string;
  secretKey: string;
  /** Seconds since the epoch (now when absent). */
  timestamp?: number;
}): Record<string, string> {
  const ts = req.timestamp ?? Math.floor(Date.now() / 1000);
  const date = new Date(ts * 1000).toISOString().slice(0, 10);
  const contentType = 'application/json; charset=utf-8';
  const canonical = [
    'POST',
    '/',
    '',
    `content-type:${contentType}\nhost:${req.host}\n`,
    'content-type;host',
    sha256Hex(req.body),
  ].join('\n');
  const scope = `${date}/${req.service}/tc3_request`;
  const toSign = ['TC3-HMAC-SHA256', String(ts), scope, sha256Hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(`TC3${req.secretKey}`, date), req.service), 'tc3_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    authorization: `TC3-HMAC-SHA256 Credential=${req.secretId}/${scope}, SignedHeaders=content-type;host, Signature=${signature}`,
    'content-type': contentType,
    host: req.host,
    'x-tc-action': req.action,
    'x-tc-version': req.version,
    'x-tc-timestamp': String(ts),
    ...(req.region ? { 'x-tc-region': req.region } : {}),
  };
}
