import { Alert, Checkbox, Empty, Message, Modal, Spin, Table, Tag } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { previewUpstreamSync, type SyncConflict, syncUpstream } from '../../api/model-meta.ts';
import { tr } from '../../locale/translate.ts';

const show = (v: unknown) => (typeof v === 'string' ? v || '-' : JSON.stringify(v));

/**
 * The sync from upstream metadata: the preview lists the served models the upstream knows (they are
 * created) and the fields where synced entries differ (overwritten only when ticked).
 */
export default function SyncDialog({
  visible,
  onClose,
  onSynced,
}: {
  visible: boolean;
  onClose: () => void;
  onSynced: () => void;
}) {
  const [loading, setLoading] = useState(false);
  const [missing, setMissing] = useState<string[]>([]);
  const [conflicts, setConflicts] = useState<SyncConflict[]>([]);
  const [failed, setFailed] = useState<string>();
  /** model name -> the fields to overwrite. */
  const [chosen, setChosen] = useState<Record<string, string[]>>({});
  const [applying, setApplying] = useState(false);

  useEffect(() => {
    if (!visible) return;
    setLoading(true);
    setFailed(undefined);
    setChosen({});
    void previewUpstreamSync().then((res) => {
      setLoading(false);
      if (!res.success || !res.data) {
        setFailed(res.message);
        setMissing([]);
        setConflicts([]);
        return;
      }
      setMissing(res.data.missing ?? []);
      setConflicts(res.data.conflicts ?? []);
    });
  }, [visible]);

  const toggle = (model: string, field: string, on: boolean) =>
    setChosen((c) => {
      const fields = new Set(c[model] ?? []);
      if (on) fields.add(field);
      else fields.delete(field);
      return { ...c, [model]: [...fields] };
    });

  const apply = async () => {
    setApplying(true);
    const overwrite = Object.entries(chosen)
      .filter(([, fields]) => fields.length > 0)
      .map(([model_name, fields]) => ({ model_name, fields }));
    const res = await syncUpstream(overwrite);
    setApplying(false);
    if (!res.success || !res.data) return;
    Message.success(
      tr('models.syncDone', {
        created: res.data.created_models,
        updated: res.data.updated_models,
        vendors: res.data.created_vendors,
      }),
    );
    onSynced();
  };

  const rows = conflicts.flatMap((c) =>
    c.fields.map((f) => ({ key: `${c.model_name}|${f.field}`, model: c.model_name, ...f })),
  );
  return (
    <Modal
      title={tr('models.syncUpstream')}
      visible={visible}
      onCancel={onClose}
      onOk={() => void apply()}
      okText={tr('models.applySync')}
      okButtonProps={{ disabled: loading || failed !== undefined, loading: applying }}
      style={{ width: 760, maxWidth: '95vw' }}
    >
      {loading ? (
        <Spin style={{ display: 'block' }} />
      ) : failed ? (
        <Alert type="error" content={failed} />
      ) : (
        <>
          <div style={{ marginBottom: 12 }}>{tr('models.syncWillCreate', { n: missing.length })}</div>
          <div style={{ marginBottom: 16 }}>
            {missing.map((m) => (
              <Tag key={m} style={{ margin: 2 }}>
                {m}
              </Tag>
            ))}
          </div>
          <div style={{ marginBottom: 8 }}>{tr('models.syncConflicts')}</div>
          {rows.length === 0 ? (
            <Empty description={tr('models.noConflicts')} />
          ) : (
            <Table
              rowKey="key"
              size="small"
              pagination={false}
              data={rows}
              columns={[
                {
                  title: tr('models.overwrite'),
                  width: 70,
                  render: (_v, r) => (
                    <Checkbox
                      checked={(chosen[r.model] ?? []).includes(r.field)}
                      onChange={(on) => toggle(r.model, r.field, on)}
                    />
                  ),
                },
                { title: tr('models.modelName'), dataIndex: 'model' },
                { title: tr('models.field'), dataIndex: 'field' },
                { title: tr('models.localValue'), render: (_v, r) => show(r.local) },
                { title: tr('models.upstreamValue'), render: (_v, r) => show(r.upstream) },
              ]}
            />
          )}
        </>
      )}
    </Modal>
  );
}
