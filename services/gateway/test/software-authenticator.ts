/**
 * A WebAuthn authenticator in software, written from the WebAuthn level 2 and CTAP2 texts apart
 * from the service's library: a P-256 key made with node:crypto, "none" attestation (CBOR by hand),
 * and assertions signed with ES256 over authenticatorData || SHA-256(clientDataJSON), as a browser
 * hands them to the page (base64url JSON of PublicKeyCredential).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

/** A CBOR head (RFC 8949 section 3): major type and argument. */
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(n, 1);
  return b;
}
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;
/** Just enough CBOR for attestation objects and COSE keys: integers, text, bytes, maps. */
function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') {
    const t = Buffer.from(v, 'utf8');
    return Buffer.concat([head(3, t.length), t]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  const parts = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cbor(k), cbor(val));
  return Buffer.concat(parts);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface CreationOptions {
  challenge: string;
  rp: { id: string };
  user: { id: string };
}
export interface RequestOptions {
  challenge: string;
  rpId: string;
  allowCredentials?: { id: string }[];
}

/** One credential of one authenticator; `counter` is its signature count. */
export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly key: { privateKey: KeyObject; publicKey: KeyObject } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
  });
  counter = 0;
  userHandle = '';
  rpId = '';

  get id(): string {
    return b64url(this.credentialId);
  }

  private authData(rpId: string, flags: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** navigator.credentials.create() answered: the RegistrationResponseJSON. */
  register(options: CreationOptions, origin: string) {
    this.rpId = options.rp.id;
    this.userHandle = options.user.id;
    const jwk = this.key.publicKey.export({ format: 'jwk' });
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLen, this.credentialId, cose]);
    const authData = this.authData(this.rpId, FLAG_UP | FLAG_UV | FLAG_AT, attested);
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientData = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(Buffer.from(clientData)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /**
   * navigator.credentials.get() answered: the AuthenticationResponseJSON. `signWith` signs with
   * another key (a forged answer); `counter` overrides the next signature count.
   */
  assert(
    options: RequestOptions,
    origin: string,
    opts: { signWith?: KeyObject; counter?: number; rpId?: string } = {},
  ) {
    this.counter = opts.counter ?? this.counter + 1;
    const authData = this.authData(opts.rpId ?? options.rpId, FLAG_UP | FLAG_UV);
    const clientData = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }),
    );
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientData)]),
      opts.signWith ?? this.key.privateKey,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: this.userHandle,
      },
    };
  }
}

/** A key no authenticator registered (for forged signatures). */
export const strangerKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
