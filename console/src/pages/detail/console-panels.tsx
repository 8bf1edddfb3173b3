import { Card, Collapse, Grid, Space, Tag, Typography } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { type ConsolePanels, getConsolePanels, getUptimeStatus, type UptimeGroup } from '../../api/console-panels.ts';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

/** Uptime Kuma's heartbeat status: its label and tag colour. */
const STATUS: Record<number, [LocaleKey, string]> = {
  0: ['detail.uptimeDown', 'red'],
  1: ['detail.uptimeUp', 'green'],
  2: ['detail.uptimePending', 'orange'],
  3: ['detail.uptimeMaintenance', 'blue'],
};

const ANNOUNCEMENT_COLOR: Record<string, string> = {
  default: 'gray',
  ongoing: 'arcoblue',
  success: 'green',
  warning: 'orange',
  error: 'red',
};

/** The date of an announcement in the reader's locale. */
export function publishedOn(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

/** 24-hour uptime as a percentage with two decimals. */
export function uptimePercent(ratio: number): string {
  return `${(Math.max(0, Math.min(1, ratio)) * 100).toFixed(2)}%`;
}

/**
 * The dashboard's panels set by the admins (new-api's console settings): announcements, API
 * addresses, FAQ and the Uptime Kuma status; nothing when none is set.
 */
export default function DashboardPanels() {
  const [panels, setPanels] = useState<ConsolePanels>();
  const [uptime, setUptime] = useState<UptimeGroup[]>([]);

  useEffect(() => {
    let live = true;
    void getConsolePanels().then((res) => {
      if (!live || !res.success || !res.data) return;
      const d = res.data;
      setPanels({
        ...d,
        announcements: Array.isArray(d.announcements) ? d.announcements : [],
        api_info: Array.isArray(d.api_info) ? d.api_info : [],
        faq: Array.isArray(d.faq) ? d.faq : [],
      });
      if (res.data.uptime_kuma_enabled)
        void getUptimeStatus().then((u) => live && u.success && setUptime(Array.isArray(u.data) ? u.data : []));
    });
    return () => {
      live = false;
    };
  }, []);

  if (!panels) return null;
  const cards = [];
  if (panels.announcements.length > 0)
    cards.push(
      <Card key="announcements" title={tr('detail.announcements')} className="aigw-panel">
        <Space direction="vertical" style={{ width: '100%' }}>
          {panels.announcements.map((a) => (
            <div key={`${a.publishDate}-${a.content}`}>
              <Space>
                <Tag color={ANNOUNCEMENT_COLOR[a.type ?? 'default'] ?? 'gray'}>{publishedOn(a.publishDate)}</Tag>
                <Typography.Text>{a.content}</Typography.Text>
              </Space>
              {a.extra ? <Typography.Paragraph type="secondary">{a.extra}</Typography.Paragraph> : null}
            </div>
          ))}
        </Space>
      </Card>,
    );
  if (panels.api_info.length > 0)
    cards.push(
      <Card key="api-info" title={tr('detail.apiInfo')} className="aigw-panel">
        <Space direction="vertical" style={{ width: '100%' }}>
          {panels.api_info.map((a) => (
            <div key={`${a.route}-${a.url}`}>
              <Tag color={a.color}>{a.route}</Tag> <Typography.Text copyable>{a.url}</Typography.Text>
              <Typography.Paragraph type="secondary">{a.description}</Typography.Paragraph>
            </div>
          ))}
        </Space>
      </Card>,
    );
  if (panels.faq.length > 0)
    cards.push(
      <Card key="faq" title={tr('detail.faq')} className="aigw-panel">
        <Collapse bordered={false}>
          {panels.faq.map((f, i) => (
            <Collapse.Item key={f.question} name={String(i)} header={f.question}>
              <Typography.Paragraph style={{ whiteSpace: 'pre-wrap' }}>{f.answer}</Typography.Paragraph>
            </Collapse.Item>
          ))}
        </Collapse>
      </Card>,
    );
  if (panels.uptime_kuma_enabled && uptime.length > 0)
    cards.push(
      <Card key="uptime" title={tr('detail.uptime')} className="aigw-panel">
        <Space direction="vertical" style={{ width: '100%' }}>
          {uptime.map((g) => (
            <div key={g.categoryName}>
              <Typography.Title heading={6}>{g.categoryName}</Typography.Title>
              {g.monitors.length === 0 ? (
                <Typography.Text type="secondary">{tr('detail.noUptimeData')}</Typography.Text>
              ) : (
                g.monitors.map((m) => {
                  const [label, color] = STATUS[m.status] ?? STATUS[0]!;
                  return (
                    <Space key={`${m.group}-${m.name}`} style={{ display: 'flex' }}>
                      <Tag color={color}>{tr(label)}</Tag>
                      <Typography.Text>{m.name}</Typography.Text>
                      <Typography.Text type="secondary">
                        {tr('detail.uptimeRatio', { ratio: uptimePercent(m.uptime) })}
                      </Typography.Text>
                    </Space>
                  );
                })
              )}
            </div>
          ))}
        </Space>
      </Card>,
    );
  if (cards.length === 0) return null;
  return (
    <Grid.Row gutter={[16, 16]} className="aigw-detail-panels" style={{ marginTop: 16 }}>
      {cards.map((c) => (
        <Grid.Col key={c.key} xs={24} md={12}>
          {c}
        </Grid.Col>
      ))}
    </Grid.Row>
  );
}
