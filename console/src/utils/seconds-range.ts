/**
 * Form.Item props for a DatePicker.RangePicker whose form value is [start, end] in Unix seconds
 * (what the log and task APIs take); the picker itself works in milliseconds.
 */
export const secondsRange = {
  formatter: (r?: [number, number]) => (r ? [r[0] * 1000, r[1] * 1000] : undefined),
  getValueFromEvent: (_s: string[], d?: { unix(): number }[]) =>
    (d?.[0] && d[1] ? [d[0].unix(), d[1].unix()] : undefined) as [number, number],
};
