import { Button, Modal, Spin } from '@arco-design/web-react';
import { lazy, Suspense, useEffect, useState } from 'react';
import { getNotice } from '../../api/status.ts';
import { useT } from '../../locale/index.tsx';
import { fingerprint } from '../../utils/fingerprint.ts';

// The Markdown renderer loads only when there is a notice to show: every page carries this dialog.
const RichContent = lazy(() => import('../RichContent/index.tsx'));

/** localStorage key holding the fingerprint of the notice the user last dismissed. */
export const NOTICE_DISMISSED_KEY = 'notice_dismissed';

/**
 * The admin's Notice in a dialog, once per visit of the console, until the user dismisses it;
 * a dismissed notice comes back only when its text changes.
 */
export default function NoticeDialog() {
  const t = useT();
  const [notice, setNotice] = useState('');
  useEffect(() => {
    let live = true;
    void getNotice().then((res) => {
      const text = res.success && typeof res.data === 'string' ? res.data : '';
      if (live && text.trim() && localStorage.getItem(NOTICE_DISMISSED_KEY) !== fingerprint(text)) setNotice(text);
    });
    return () => {
      live = false;
    };
  }, []);

  const dismiss = () => {
    localStorage.setItem(NOTICE_DISMISSED_KEY, fingerprint(notice));
    setNotice('');
  };
  return (
    <Modal
      className="aigw-notice"
      visible={notice !== ''}
      title={t('notice.title')}
      onCancel={dismiss}
      footer={
        <Button type="primary" onClick={dismiss}>
          {t('notice.dismiss')}
        </Button>
      }
    >
      {notice && (
        <Suspense fallback={<Spin />}>
          <RichContent content={notice} title={t('notice.title')} />
        </Suspense>
      )}
    </Modal>
  );
}
