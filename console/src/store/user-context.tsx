import { createContext, type ReactNode, useContext, useEffect, useMemo, useState } from 'react';
import type { User } from '../api/types.ts';
import { isAdmin, isRoot } from './roles.ts';
import { clearStoredUser, getStoredUser, onStoredUserChange, setStoredUser, USER_KEY } from './user-storage.ts';

interface UserValue {
  /** The logged-in user restored from localStorage, or null. */
  user: User | null;
  isAdmin: boolean;
  isRoot: boolean;
  /** Stores the user after a login. */
  setUser: (user: User) => void;
  /** Forgets the user (the server-side logout is the caller's). */
  clearUser: () => void;
}

const UserContext = createContext<UserValue | null>(null);

/** Keeps the current user in React state, in step with localStorage (also across tabs). */
export function UserProvider({ children }: { children: ReactNode }) {
  const [user, setUserState] = useState<User | null>(getStoredUser);

  useEffect(() => {
    const unsubscribe = onStoredUserChange(setUserState);
    const onStorage = (event: StorageEvent) => {
      if (event.key === USER_KEY || event.key === null) setUserState(getStoredUser());
    };
    window.addEventListener('storage', onStorage);
    return () => {
      unsubscribe();
      window.removeEventListener('storage', onStorage);
    };
  }, []);

  const value = useMemo<UserValue>(
    () => ({
      user,
      isAdmin: isAdmin(user),
      isRoot: isRoot(user),
      setUser: setStoredUser,
      clearUser: () => clearStoredUser(),
    }),
    [user],
  );
  return <UserContext.Provider value={value}>{children}</UserContext.Provider>;
}

/** The current user and its helpers; must be used under UserProvider. */
export function useUser(): UserValue {
  const value = useContext(UserContext);
  if (!value) throw new Error('useUser must be used inside UserProvider');
  return value;
}
