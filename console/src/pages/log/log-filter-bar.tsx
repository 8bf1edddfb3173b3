import { Button, DatePicker, Form, Input, Select } from '@arco-design/web-react';
import { IconDownload, IconSearch } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { exportLogs, type LogFilters } from '../../api/log.ts';
import { tr } from '../../locale/translate.ts';
import { secondsRange } from '../../utils/seconds-range.ts';
import { logTypeOptions } from './log-rules.ts';

/** The filter fields; range in Unix seconds. */
export interface FilterForm {
  token_name: string;
  model_name: string;
  username: string;
  channel: string;
  range: [number, number];
  type: number;
}

/** The API filters of a search (the user and channel filters only for an admin). */
export function filtersOf(f: FilterForm, admin: boolean): LogFilters {
  return {
    type: f.type,
    token_name: f.token_name.trim(),
    model_name: f.model_name.trim(),
    start_timestamp: f.range[0],
    end_timestamp: f.range[1],
    ...(admin ? { username: f.username.trim(), channel: f.channel.trim() } : {}),
  };
}

/** A cleared text field is an empty string, not undefined. */
const text = (v?: string) => v ?? '';

/** The CSV of the searched filters, saved under the server's name; whether it is being made. */
function useLogExport(admin: boolean, filters: LogFilters) {
  const [exporting, setExporting] = useState(false);
  const download = async () => {
    setExporting(true);
    const res = await exportLogs(admin, filters);
    setExporting(false);
    if (!('blob' in res)) return;
    const url = URL.createObjectURL(res.blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = res.name;
    a.click();
    // Revoked once the browser has taken the file.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return { exporting, download };
}

/**
 * The log filters (token, model, time range, the admin's user and channel, type), search and the
 * export of what the table lists (the filters last searched, not what is being typed).
 */
export function LogFilterBar({
  admin,
  mobile,
  initial,
  searched,
  onSearch,
}: {
  admin: boolean;
  /** On a phone the filters stack, each field as wide as the screen (the time range fits whole). */
  mobile: boolean;
  initial: FilterForm;
  searched: LogFilters;
  onSearch: (form: FilterForm) => void;
}) {
  const { exporting, download } = useLogExport(admin, searched);
  return (
    <Form
      layout={mobile ? 'vertical' : 'inline'}
      className="aigw-log-filters"
      initialValues={initial}
      onSubmit={(v: Partial<FilterForm>) => onSearch({ ...initial, ...v })}
    >
      <Form.Item label={tr('log.tokenName')} field="token_name" normalize={text}>
        <Input name="token_name" allowClear />
      </Form.Item>
      <Form.Item label={tr('common.modelName')} field="model_name" normalize={text}>
        <Input name="model_name" allowClear />
      </Form.Item>
      <Form.Item
        label={tr('common.timeRange')}
        field="range"
        // Seconds in the form, milliseconds in the picker; clearing keeps the last range.
        {...secondsRange}
        normalize={(v?: [number, number], prev?: [number, number]) => v ?? prev}
      >
        <DatePicker.RangePicker
          showTime
          // A phone shows both ends whole without the year and the seconds.
          format={mobile ? 'MM-DD HH:mm' : 'YYYY-MM-DD HH:mm:ss'}
        />
      </Form.Item>
      {admin ? (
        <>
          <Form.Item label={tr('common.username')} field="username" normalize={text}>
            <Input name="username" allowClear />
          </Form.Item>
          <Form.Item label={tr('common.channelId')} field="channel" normalize={text}>
            <Input name="channel" allowClear />
          </Form.Item>
        </>
      ) : null}
      <Form.Item label={tr('log.logType')} field="type">
        <Select style={{ width: 120 }} options={logTypeOptions()} />
      </Form.Item>
      <Form.Item>
        <Button type="primary" htmlType="submit" icon={<IconSearch />}>
          {tr('common.search')}
        </Button>
      </Form.Item>
      <Form.Item>
        <Button icon={<IconDownload />} loading={exporting} onClick={() => void download()}>
          {tr('log.export')}
        </Button>
      </Form.Item>
    </Form>
  );
}
