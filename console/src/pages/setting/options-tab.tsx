import { Button, DatePicker, Message, Modal, Spin } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { deleteLogsBefore, listOptions, resetModelRatios } from '../../api/option.ts';
import { useStatus } from '../../store/status-context.tsx';
import OptionSection from './option-section.tsx';
import type { SectionSpec } from './sections.ts';

/** Log cleanup: deletes logs before a chosen time (default: one month ago). */
function LogCleanup() {
  const [date, setDate] = useState<Date | undefined>(() => {
    const d = new Date();
    d.setMonth(d.getMonth() - 1);
    return d;
  });
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (!date) {
      Message.error('请选择日志记录时间');
      return;
    }
    setBusy(true);
    const res = await deleteLogsBefore(Math.floor(date.getTime() / 1000));
    setBusy(false);
    if (res.success) Message.success(`${res.data ?? 0} 条日志已清理！`);
    else Message.error('日志清理失败');
  };
  return (
    <>
      <DatePicker showTime value={date} onChange={(_s, d) => setDate(d ? d.toDate() : undefined)} />
      <Button
        status="danger"
        loading={busy}
        onClick={() =>
          Modal.confirm({ title: '清除历史日志', content: '确定要清除所选时间之前的所有日志吗？', onOk: run })
        }
      >
        清除历史日志
      </Button>
    </>
  );
}

function ResetModelRatio({ onDone }: { onDone: () => void }) {
  return (
    <Button
      status="danger"
      onClick={() =>
        Modal.confirm({
          title: '重置模型倍率',
          content: '确定要将模型倍率重置为默认值吗？',
          onOk: async () => {
            const res = await resetModelRatios();
            if (res.success) {
              Message.success('保存成功');
              onDone();
            }
          },
        })
      }
    >
      重置模型倍率
    </Button>
  );
}

/** A settings tab (operation, system or other): loads the options once and renders its sections. */
export default function OptionsTab({ sections }: { sections: readonly SectionSpec[] }) {
  const [values, setValues] = useState<Record<string, string> | null>(null);
  const { reload } = useStatus();

  const load = useCallback(async () => {
    const res = await listOptions();
    if (res.success && res.data) setValues(Object.fromEntries(res.data.map((o) => [o.key, o.value])));
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const onSaved = () => {
    // Read back what the server stored (trailing slashes stripped, SSL on with port 465, ...).
    void load();
    void reload();
  };

  if (!values) return <Spin style={{ display: 'block', margin: '48px auto' }} />;
  return (
    <div className="aigw-option-tab">
      {sections.map((section) => (
        <OptionSection key={section.id} section={section} values={values} onSaved={onSaved}>
          {section.extra === 'log-cleanup' && <LogCleanup />}
          {section.extra === 'reset-model-ratio' && <ResetModelRatio onDone={() => void load()} />}
        </OptionSection>
      ))}
    </div>
  );
}
