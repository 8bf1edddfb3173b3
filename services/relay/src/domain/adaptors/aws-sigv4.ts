/**
 * AWS Signature Version 4 (the signing of every AWS API call, Bedrock's included): a canonical
 * request, a string to sign over its hash, and an HMAC-SHA256 chain from the secret key through
 * the date, region and service. Only what a JSON POST needs: no query strings, no chunked bodies.
 */
import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) carry a session token. */
  sessionToken?: string;
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding of one path segment (AWS leaves only A-Z a-z 0-9 - . _ ~ unencoded). */
export function awsEncode(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The canonical URI of a path as sent on the wire: every service but S3 encodes each segment
 * once more (so `%3A` in the request path is `%253A` in the canonical request).
 */
export function canonicalUri(wirePath: string): string {
  return wirePath
    .split('/')
    .map((s) => awsEncode(s))
    .join('/');
}

/** `20240101T120000Z` and `20240101` of a time. */
export function amzDate(at: Date): { stamp: string; day: string } {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { stamp, day: stamp.slice(0, 8) };
}

/**
 * Signs a request: returns the headers to send (host, x-amz-date, x-amz-content-sha256, the
 * session token when there is one, and authorization) merged over `headers`.
 */
export function signSigV4(req: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  region: string;
  service: string;
  credentials: AwsCredentials;
  now?: Date;
  /** Send and sign x-amz-content-sha256 (the default; AWS's documented examples leave it out). */
  contentSha256Header?: boolean;
}): Record<string, string> {
  const url = new URL(req.url);
  const { stamp, day } = amzDate(req.now ?? new Date());
  const payloadHash = sha256Hex(req.body);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) out[k.toLowerCase()] = v;
  out.host = url.host;
  out['x-amz-date'] = stamp;
  if (req.contentSha256Header !== false) out['x-amz-content-sha256'] = payloadHash;
  if (req.credentials.sessionToken) out['x-amz-security-token'] = req.credentials.sessionToken;

  const names = Object.keys(out)
    .filter((n) => n !== 'authorization')
    .sort();
  const canonicalHeaders = names.map((n) => `${n}:${String(out[n]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => `${awsEncode(k)}=${awsEncode(v)}`)
    .sort()
    .join('&');
  const canonical = [req.method, canonicalUri(url.pathname), query, canonicalHeaders, signedHeaders, payloadHash].join(
    '\n',
  );
  const scope = `${day}/${req.region}/${req.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonical)].join('\n');
  const kDate = hmac(`AWS4${req.credentials.secretAccessKey}`, day);
  const kSigning = hmac(hmac(hmac(kDate, req.region), req.service), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
  out.authorization = `AWS4-HMAC-SHA256 Credential=${req.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}
