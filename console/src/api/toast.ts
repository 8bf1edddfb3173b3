import { Message } from '@arco-design/web-react';
import type { Notify } from './request.ts';

/** The console's toasts: Arco Message, one per notice. */
export const arcoNotify: Notify = (level, content) => {
  Message[level]({ content, duration: level === 'error' ? 4000 : 3000 });
};
