import { Button, Empty, Modal, Space, Spin, Tag, Typography } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { getMissingModels } from '../../api/model-meta.ts';
import { tr } from '../../locale/translate.ts';

/**
 * The models enabled channels serve without a catalogue entry (GET /api/models/missing), each with
 * a button that opens the create drawer for it; those without a price are marked (the relay refuses
 * them until ModelPrice or ModelRatio prices them).
 */
export default function MissingDialog({
  visible,
  onClose,
  onAdd,
}: {
  visible: boolean;
  onClose: () => void;
  onAdd: (model: string) => void;
}) {
  const [loading, setLoading] = useState(false);
  const [missing, setMissing] = useState<string[]>([]);
  const [unpriced, setUnpriced] = useState<string[]>([]);
  useEffect(() => {
    if (!visible) return;
    setLoading(true);
    void getMissingModels().then((res) => {
      setLoading(false);
      setMissing(res.success ? (res.data ?? []) : []);
      setUnpriced(res.success ? res.unpriced : []);
    });
  }, [visible]);

  return (
    <Modal
      title={tr('models.missingModels')}
      visible={visible}
      onCancel={onClose}
      footer={null}
      style={{ maxWidth: '95vw' }}
    >
      {loading ? (
        <Spin style={{ display: 'block' }} />
      ) : (
        <>
          <Typography.Paragraph type="secondary">{tr('models.missingExtra')}</Typography.Paragraph>
          {missing.length === 0 ? (
            <Empty description={tr('models.noMissing')} />
          ) : (
            <Space direction="vertical" style={{ width: '100%' }}>
              {missing.map((m) => (
                <Space key={m} style={{ justifyContent: 'space-between', width: '100%' }}>
                  <span>
                    {m}{' '}
                    {unpriced.includes(m) && (
                      <Tag color="orange" size="small">
                        {tr('models.unpriced')}
                      </Tag>
                    )}
                  </span>
                  <Button size="mini" type="primary" onClick={() => onAdd(m)}>
                    {tr('models.addThis')}
                  </Button>
                </Space>
              ))}
            </Space>
          )}
          {unpriced.length > 0 && (
            <Typography.Paragraph style={{ marginTop: 16 }}>
              {tr('models.unpricedList', { n: unpriced.length })} {unpriced.join(', ')}
            </Typography.Paragraph>
          )}
        </>
      )}
    </Modal>
  );
}
