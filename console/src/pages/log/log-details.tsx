import { Typography } from '@arco-design/web-react';
import { type LogEntry, parseOther } from '../../api/log.ts';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';
import { cacheAndTierLines } from './log-rules.ts';

/** The lines of a log's expanded row (label and value), in the order they are shown. */
export function logDetailLines(log: LogEntry, admin: boolean): { label: string; value: string }[] {
  const other = parseOther(log.other);
  const data: { label: string; value: string }[] = [];
  const priced = other.model_price !== undefined && other.model_price >= 0;
  if (log.content) data.push({ label: tr('log.details'), value: serverText(log.content) });
  if (priced) data.push({ label: tr('common.modelPrice'), value: String(other.model_price) });
  else if (other.model_ratio !== undefined)
    data.push({ label: tr('log.modelRatio'), value: String(other.model_ratio) });
  if (other.completion_ratio !== undefined && !priced)
    data.push({ label: tr('log.completionRatio'), value: String(other.completion_ratio) });
  if (other.group_ratio !== undefined) data.push({ label: tr('log.groupRatio'), value: String(other.group_ratio) });
  if (other.frt) data.push({ label: tr('log.firstTokenTime'), value: `${(other.frt / 1000).toFixed(2)} s` });
  if (other.upstream_model_name) data.push({ label: tr('log.actualModel'), value: other.upstream_model_name });
  // Cache reads, writes by lifetime and the long-context tier, each with the ratio applied.
  data.push(...cacheAndTierLines(other));
  if (other.image_tokens) data.push({ label: tr('log.imageInputTokens'), value: String(other.image_tokens) });
  if (other.image_ratio) data.push({ label: tr('log.imageRatio'), value: String(other.image_ratio) });
  if (other.audio) {
    data.push({ label: tr('log.textInputOutput'), value: `${other.text_input ?? 0} / ${other.text_output ?? 0}` });
    data.push({ label: tr('log.audioInputOutput'), value: `${other.audio_input ?? 0} / ${other.audio_output ?? 0}` });
    if (other.audio_ratio) data.push({ label: tr('log.audioRatio'), value: String(other.audio_ratio) });
    if (other.audio_completion_ratio)
      data.push({ label: tr('log.audioCompletionRatio'), value: String(other.audio_completion_ratio) });
  }
  if (other.error)
    data.push({ label: tr('log.error'), value: `${other.status_code ?? ''} ${serverText(other.error)}` });
  if (admin && other.admin_info?.use_channel?.length)
    data.push({ label: tr('log.channelsUsed'), value: other.admin_info.use_channel.join(' -> ') });
  if (log.group) data.push({ label: tr('common.group'), value: log.group });
  return data;
}

/** The expanded row: the log's other details. */
export function LogDetails({ log, admin }: { log: LogEntry; admin: boolean }) {
  const data = logDetailLines(log, admin);
  if (data.length === 0) return <Typography.Text type="secondary">{tr('common.none')}</Typography.Text>;
  return (
    <div className="aigw-log-details">
      {data.map((d) => (
        <div key={d.label}>
          <Typography.Text type="secondary">
            {d.label}
            {tr('common.colon')}
          </Typography.Text>
          <Typography.Text>{d.value}</Typography.Text>
        </div>
      ))}
    </div>
  );
}
