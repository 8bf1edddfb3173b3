import type { User } from '../api/types.ts';

/** localStorage key holding the logged-in user (spec 02 section 3). */
export const USER_KEY = 'user';

type Listener = (user: User | null) => void;
const listeners = new Set<Listener>();
/** Whether the user was last forgotten because the server answered 401 (not by a logout). */
let expired = false;

function storage(): Storage | undefined {
  return typeof localStorage === 'undefined' ? undefined : localStorage;
}

/** The stored user, or null when nobody is logged in or the stored text is unreadable. */
export function getStoredUser(): User | null {
  const raw = storage()?.getItem(USER_KEY);
  if (!raw) return null;
  try {
    const user = JSON.parse(raw) as User | null;
    return user && typeof user === 'object' && 'id' in user ? user : null;
  } catch {
    return null;
  }
}

/** The id sent as the New-Api-User header; -1 when logged out (as the reference consoles do). */
export function getStoredUserId(): number {
  return getStoredUser()?.id ?? -1;
}

/** Stores the user and tells subscribers (the React context) about it. */
export function setStoredUser(user: User): void {
  expired = false;
  storage()?.setItem(USER_KEY, JSON.stringify(user));
  for (const listener of listeners) listener(user);
}

/**
 * Forgets the user, e.g. on logout or (byExpiry) when the server answers 401: then guarded pages
 * send the browser to /login?expired=true, whichever of them re-renders first.
 */
export function clearStoredUser(byExpiry = false): void {
  expired = byExpiry;
  storage()?.removeItem(USER_KEY);
  for (const listener of listeners) listener(null);
}

/** Subscribes to user changes made outside React (API client, other tabs); returns the unsubscriber. */
export function onStoredUserChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** True when the stored user was cleared by a 401 and nobody has logged in since. */
export function loginExpired(): boolean {
  return expired;
}
