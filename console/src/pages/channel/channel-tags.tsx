import { Popover, Space, Tag, Tooltip } from '@arco-design/web-react';
import type { Channel } from '../../api/channel.ts';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';
import { hasOverrides } from './channel-overrides.ts';
import { multiKeyState, statusReason } from './channel-types.ts';

/** A Unix time in the reader's locale ('' for none). */
export const timeText = (sec: number) => (sec ? new Date(sec * 1000).toLocaleString() : '');

/**
 * Multi-key channels: how many keys serve, the disabled ones (line, time, reason) in a tooltip;
 * a click opens the key management dialog.
 */
function MultiKeyTag({ channel, onManage }: { channel: Channel; onManage: (id: number) => void }) {
  const state = multiKeyState(channel.multi_key_mode, channel.multi_key_status);
  if (!state) return null;
  const enabled = state.size - state.disabled.length;
  const tip =
    state.disabled.length === 0
      ? tr('channelKeys.allKeysEnabled')
      : state.disabled
          .map((d) =>
            tr('channelKeys.disabledKeyLine', { index: d.index, reason: serverText(d.reason), time: timeText(d.time) }),
          )
          .join('\n');
  return (
    <Tooltip content={<div style={{ whiteSpace: 'pre-line' }}>{tip}</div>}>
      <Tag
        className="aigw-multikey"
        color={state.disabled.length ? 'orange' : 'arcoblue'}
        style={{ cursor: 'pointer' }}
        aria-label={tr('channelKeys.manage')}
        onClick={() => onManage(channel.id)}
      >
        {tr('channelKeys.multiKeyTag', { enabled, size: state.size })}
      </Tag>
    </Tooltip>
  );
}

/** JSON indented for reading; other text as it is. */
const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

/** The overrides of a channel (param, header, setting, settings) in a popover on a small tag. */
export function OverridesTag({ channel }: { channel: Channel }) {
  if (!hasOverrides(channel)) return null;
  const parts = (
    [
      ['param_override', channel.param_override],
      ['header_override', channel.header_override],
      ['setting', channel.setting],
      ['settings', channel.settings],
    ] as const
  ).filter(([, v]) => v);
  return (
    <Popover
      title={tr('channelOverrides.section')}
      content={
        <div className="aigw-channel-overrides-detail" style={{ maxWidth: 420, maxHeight: 360, overflow: 'auto' }}>
          {parts.map(([k, v]) => (
            <div key={k}>
              <b>{k}</b>
              <pre style={{ margin: '4px 0 8px', whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
                {pretty(v ?? '')}
              </pre>
            </div>
          ))}
        </div>
      }
    >
      <Tag size="small" color="purple" className="aigw-overrides">
        {tr('channelOverrides.tag')}
      </Tag>
    </Popover>
  );
}

/** Status tag; auto-disabled channels explain why and when in a tooltip. */
export function StatusTag({ channel, onManage }: { channel: Channel; onManage: (id: number) => void }) {
  if (channel.status === 1)
    return (
      <Space size={4} wrap>
        <Tag color="green">{tr('common.enabled')}</Tag>
        <MultiKeyTag channel={channel} onManage={onManage} />
      </Space>
    );
  if (channel.status === 2) return <Tag color="red">{tr('common.disabled')}</Tag>;
  const why = statusReason(channel.other_info);
  const tag = <Tag color="orange">{tr('common.autoDisable')}</Tag>;
  if (!why) return tag;
  return (
    <Tooltip content={tr('channel.disabledWhy', { reason: serverText(why.reason), time: timeText(why.time) })}>
      <span className="aigw-status-reason">{tag}</span>
    </Tooltip>
  );
}
