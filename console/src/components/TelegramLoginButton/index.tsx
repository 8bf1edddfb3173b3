import { useEffect, useRef } from 'react';

/** The fields the chat-app widget answers with, signed by `hash`. */
export type TelegramUser = Record<string, string | number>;

declare global {
  interface Window {
    [callback: `onTelegramAuth${string}`]: ((user: TelegramUser) => void) | undefined;
  }
}

let seq = 0;

/** The chat-app login widget for the configured bot; `onAuth` gets the signed fields. */
export default function TelegramLoginButton({
  botName,
  onAuth,
}: {
  botName: string;
  onAuth: (user: TelegramUser) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const handler = useRef(onAuth);
  handler.current = onAuth;
  useEffect(() => {
    const el = box.current;
    if (!el || !botName) return;
    const name = `onTelegramAuth${++seq}` as const;
    window[name] = (user) => handler.current(user);
    const script = document.createElement('script');
    script.src = 'https://telegram.org/js/telegram-widget.js?22';
    script.async = true;
    script.setAttribute('data-telegram-login', botName);
    script.setAttribute('data-size', 'large');
    script.setAttribute('data-onauth', `${name}(user)`);
    script.setAttribute('data-request-access', 'write');
    el.appendChild(script);
    return () => {
      window[name] = undefined;
      el.innerHTML = '';
    };
  }, [botName]);
  return <div ref={box} />;
}
