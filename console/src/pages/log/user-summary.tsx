import { Descriptions, Modal, Spin } from '@arco-design/web-react';
import { useState } from 'react';
import { userSummary } from '../../api/log.ts';
import type { Status, User } from '../../api/types.ts';
import { tr } from '../../locale/translate.ts';
import { renderQuota } from '../../utils/format.ts';

interface SummaryState {
  visible: boolean;
  user?: User;
  loading: boolean;
}

/** The summary of a log's user an admin opens from the table: its state and opener. */
export function useUserSummary() {
  const [summary, setSummary] = useState<SummaryState>({ visible: false, loading: false });
  const open = async (id: number) => {
    setSummary({ visible: true, loading: true });
    const res = await userSummary(id);
    setSummary({ visible: true, loading: false, ...(res.success && res.data ? { user: res.data } : {}) });
  };
  const close = () => setSummary({ visible: false, loading: false });
  return { summary, open, close };
}

/** The user's name, balance, used quota and request count in a modal. */
export function UserSummaryModal({
  summary,
  status,
  onClose,
}: {
  summary: SummaryState;
  status: Status;
  onClose: () => void;
}) {
  return (
    <Modal title={tr('log.userInfo')} visible={summary.visible} footer={null} onCancel={onClose}>
      <Spin loading={summary.loading} style={{ width: '100%' }}>
        {summary.user ? (
          <Descriptions
            column={1}
            data={[
              { label: tr('common.username2'), value: summary.user.username },
              { label: tr('log.balance'), value: renderQuota(summary.user.quota ?? 0, status) },
              { label: tr('common.usedQuota'), value: renderQuota(summary.user.used_quota ?? 0, status) },
              { label: tr('common.requests'), value: String(summary.user.request_count ?? 0) },
            ]}
          />
        ) : null}
      </Spin>
    </Modal>
  );
}
