import { Button, DatePicker, Message, Modal, Spin } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { deleteLogsBefore, listOptions, resetModelRatios } from '../../api/option.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import CustomOAuthCard from './custom-oauth-card.tsx';
import MissingModels from './missing-models.tsx';
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
      Message.error(tr('setting.selectALogTime'));
      return;
    }
    setBusy(true);
    const res = await deleteLogsBefore(Math.floor(date.getTime() / 1000));
    setBusy(false);
    if (res.success) Message.success(tr('setting.logsCleaned', { n: res.data ?? 0 }));
    else Message.error(tr('setting.failedToCleanUpThe'));
  };
  return (
    <>
      <DatePicker showTime value={date} onChange={(_s, d) => setDate(d ? d.toDate() : undefined)} />
      <Button
        status="danger"
        loading={busy}
        onClick={() =>
          Modal.confirm({
            title: tr('setting.clearOldLogs'),
            content: tr('setting.deleteEveryLogBeforeThe'),
            onOk: run,
          })
        }
      >
        {tr('setting.clearOldLogs')}
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
          title: tr('setting.resetModelRatios'),
          content: tr('setting.resetTheModelRatiosTo'),
          onOk: async () => {
            const res = await resetModelRatios();
            if (res.success) {
              Message.success(tr('setting.saved'));
              onDone();
            }
          },
        })
      }
    >
      {tr('setting.resetModelRatios')}
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
      {sections.map((section) =>
        section.extra === 'custom-oauth' ? (
          <CustomOAuthCard key={section.id} />
        ) : (
          <OptionSection key={section.id} section={section} values={values} onSaved={onSaved}>
            {section.extra === 'log-cleanup' && <LogCleanup />}
            {section.extra === 'reset-model-ratio' && <MissingModels values={values} />}
            {section.extra === 'reset-model-ratio' && <ResetModelRatio onDone={() => void load()} />}
          </OptionSection>
        ),
      )}
    </div>
  );
}
