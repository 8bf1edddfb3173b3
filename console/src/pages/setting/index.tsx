import { Card, Tabs } from '@arco-design/web-react';
import { useSearchParams } from 'react-router-dom';
import { type LocaleKey, useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';
import OptionsTab from './options-tab.tsx';
import PersonalSetting from './personal.tsx';
import { OPERATION_SECTIONS, OTHER_SECTIONS, SYSTEM_SECTIONS } from './sections.ts';
import './style/index.css';

type TabKey = 'personal' | 'operation' | 'system' | 'other';

const tabs: { key: TabKey; title: LocaleKey; rootOnly: boolean }[] = [
  { key: 'personal', title: 'setting.personal', rootOnly: false },
  { key: 'operation', title: 'setting.operation', rootOnly: true },
  { key: 'system', title: 'setting.system', rootOnly: true },
  { key: 'other', title: 'setting.other', rootOnly: true },
];

const content: Record<TabKey, () => JSX.Element> = {
  personal: () => <PersonalSetting />,
  operation: () => <OptionsTab sections={OPERATION_SECTIONS} />,
  system: () => <OptionsTab sections={SYSTEM_SECTIONS} />,
  other: () => <OptionsTab sections={OTHER_SECTIONS} />,
};

/** /setting?tab=...: the personal tab for everyone, the other three for super admins only. */
export default function SettingPage() {
  const t = useT();
  const { isRoot } = useUser();
  const [params, setParams] = useSearchParams();
  const visible = tabs.filter((tab) => isRoot || !tab.rootOnly);
  const requested = params.get('tab');
  const active = visible.find((tab) => tab.key === requested)?.key ?? 'personal';
  return (
    <Card bordered={false} title={t('menu.setting')}>
      <Tabs activeTab={active} onChange={(key) => setParams({ tab: key }, { replace: true })} destroyOnHide>
        {visible.map((tab) => (
          <Tabs.TabPane key={tab.key} title={t(tab.title)}>
            {tab.key === active && content[tab.key]()}
          </Tabs.TabPane>
        ))}
      </Tabs>
    </Card>
  );
}
