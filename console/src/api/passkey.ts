import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser';
import { request } from './request.ts';
import type { User } from './types.ts';

/** A ceremony's begin (new-api's shape): options for navigator.credentials and the flow token. */
export interface PasskeyCeremony<O> {
  options: O;
  flow_token: string;
  expires_at: number;
}

/** GET /api/user/passkey. */
export interface PasskeyStatus {
  enabled: boolean;
  last_used_at?: string | null;
}

/** What a re-verification unlocks (new-api's scopes; token.key.read and password.change are ours). */
export type ProofScope = 'passkey.register' | 'passkey.delete' | 'token.key.read' | 'password.change';
export type ProofMethod = '2fa' | 'passkey' | 'password';

/** A re-verification's proof, sent back as X-Security-Proof. */
export interface SecurityProof {
  proof_token: string;
  expires_at: number;
  method: ProofMethod;
  scope: ProofScope;
}

const proofHeader = (proof?: string) => (proof ? { 'X-Security-Proof': proof } : undefined);

export const getPasskeyStatus = () => request<PasskeyStatus>('GET', '/api/user/passkey', { toast: false });

export const beginPasskeyLogin = () =>
  request<PasskeyCeremony<PublicKeyCredentialRequestOptionsJSON>>('POST', '/api/user/passkey/login/begin', {
    body: {},
  });
export const finishPasskeyLogin = (flowToken: string, credential: AuthenticationResponseJSON) =>
  request<User>('POST', '/api/user/passkey/login/finish', { body: { flow_token: flowToken, credential } });

export const beginPasskeyRegistration = (proof?: string) =>
  request<PasskeyCeremony<PublicKeyCredentialCreationOptionsJSON>>('POST', '/api/user/passkey/register/begin', {
    body: {},
    headers: proofHeader(proof),
  });
export const finishPasskeyRegistration = (flowToken: string, credential: RegistrationResponseJSON, proof?: string) =>
  request<null>('POST', '/api/user/passkey/register/finish', {
    body: { flow_token: flowToken, credential },
    headers: proofHeader(proof),
  });

export const beginPasskeyVerify = (scope: ProofScope) =>
  request<PasskeyCeremony<PublicKeyCredentialRequestOptionsJSON>>('POST', '/api/user/passkey/verify/begin', {
    body: { scope },
  });
export const finishPasskeyVerify = (flowToken: string, credential: AuthenticationResponseJSON) =>
  request<SecurityProof>('POST', '/api/user/passkey/verify/finish', { body: { flow_token: flowToken, credential } });

export const deletePasskey = (proof: string) =>
  request<null>('DELETE', '/api/user/passkey', { headers: proofHeader(proof) });

/** POST /api/verify: a 2FA code or the password proves the caller again for one scope. */
export const verifySelf = (method: '2fa' | 'password', secret: string, scope: ProofScope) =>
  request<SecurityProof>('POST', '/api/verify', {
    body: method === '2fa' ? { method, code: secret, scope } : { method, password: secret, scope },
  });

/** PUT /api/user/self with a new password and, when the account has 2FA or a passkey, its proof. */
export const changePassword = (body: { password: string; original_password: string }, proof?: string) =>
  request<null>('PUT', '/api/user/self', { body, headers: proofHeader(proof) });

/** POST /api/token/:id/key: a token's full key, behind a re-verification. */
export const revealTokenKey = (id: number, proof: string) =>
  request<{ key: string }>('POST', `/api/token/${id}/key`, { body: {}, headers: proofHeader(proof) });

/** DELETE /api/user/:id/reset_passkey (admin). */
export const adminResetPasskey = (id: number) => request<null>('DELETE', `/api/user/${id}/reset_passkey`);
