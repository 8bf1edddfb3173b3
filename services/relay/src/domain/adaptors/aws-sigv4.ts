/**
 * AWS Signature Version 4 (the signing of every AWS API call, Bedrock's included), done by the
 * AWS SDK's own signer (`@smithy/signature-v4`) so that canonicalisation, encoding and key
 * derivation follow AWS's implementation rather than one of our own.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) carry a session token. */
  sessionToken?: string;
}

/**
 * SHA-256 backed by node:crypto, as the AWS SDK's Node runtime configures it: the whole request
 * body is hashed for x-amz-content-sha256, and a pure-JavaScript hash of a body carrying images
 * would block the event loop for far longer.
 */
const Sha256 = Hash.bind(null, 'sha256');

/**
 * Signs a request: returns the headers to send (host, x-amz-date, x-amz-content-sha256, the
 * session token when there is one, and authorization) merged over `headers`, all names in
 * lower case.
 */
export async function signSigV4(req: {
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
}): Promise<Record<string, string>> {
  const url = new URL(req.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  // The signer signs the headers it is given; in the SDK a middleware adds host before it runs,
  // so it is set here, as the HTTP client will send it.
  headers.host = url.host;
  // Repeated query parameters become arrays, which the signer sorts value by value as AWS does.
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const seen = query[k];
    query[k] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v];
  }
  const signer = new SignatureV4({
    service: req.service,
    region: req.region,
    credentials: req.credentials,
    sha256: Sha256,
    applyChecksum: req.contentSha256Header !== false,
  });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      // The path as it goes on the wire: the signer encodes it once more, as every service but
      // S3 expects (`%3A` in a Bedrock model id is `%253A` in the canonical request).
      path: url.pathname,
      query,
      headers,
      body: req.body,
    },
    { signingDate: req.now ?? new Date() },
  );
  return signed.headers;
}
