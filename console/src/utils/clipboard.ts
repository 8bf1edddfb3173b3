import { Message, Modal } from '@arco-design/web-react';
import { tr } from '../locale/translate.ts';

/** Copies text; when the browser refuses, shows it with 无法复制到剪贴板，请手动复制 (spec 02 section 8). */
export async function copyText(text: string, success = tr('clipboard.copiedToTheClipboard')): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    Message.success(success);
    return true;
  } catch {
    Modal.info({ title: tr('clipboard.cannotCopyToTheClipboard'), content: text, simple: true });
    return false;
  }
}
