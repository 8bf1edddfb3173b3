/** A small stacked bar chart in SVG (one bar per time slot, one colour per model). */
const COLORS = [
  '#165dff',
  '#14c9c9',
  '#f7ba1e',
  '#722ed1',
  '#f53f3f',
  '#00b42a',
  '#ff7d00',
  '#3491fa',
  '#d91ad9',
  '#86909c',
];

export function colorOf(i: number): string {
  return COLORS[i % COLORS.length] as string;
}

export default function StackedBars({
  slots,
  models,
  values,
  label,
  format,
  tick = format,
}: {
  slots: number[];
  models: string[];
  values: Record<string, number[]>;
  label: (slot: number) => string;
  /** A bar's value, in its tooltip. */
  format: (v: number) => string;
  /** An axis label, given the axis maximum (default: format). */
  tick?: (v: number, max: number) => string;
}) {
  const width = 760;
  const height = 220;
  const pad = { left: 56, bottom: 40, top: 10, right: 10 };
  const sums = slots.map((_s, i) => models.reduce((n, m) => n + (values[m]?.[i] ?? 0), 0));
  const max = Math.max(1, ...sums);
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const bw = slots.length ? Math.max(2, Math.min(40, (plotW / slots.length) * 0.7)) : 0;
  const step = slots.length ? plotW / slots.length : 0;
  const labelEvery = Math.max(1, Math.ceil(slots.length / 8));
  return (
    <svg viewBox={`0 0 ${width} ${height}`} className="aigw-chart" role="img">
      <title>chart</title>
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line
            x1={pad.left}
            x2={width - pad.right}
            y1={pad.top + plotH * (1 - f)}
            y2={pad.top + plotH * (1 - f)}
            stroke="var(--color-border-2)"
          />
          <text
            x={pad.left - 6}
            y={pad.top + plotH * (1 - f) + 4}
            fontSize="10"
            textAnchor="end"
            fill="var(--color-text-3)"
          >
            {tick(max * f, max)}
          </text>
        </g>
      ))}
      {slots.map((slot, i) => {
        let y = pad.top + plotH;
        const x = pad.left + step * i + (step - bw) / 2;
        return (
          <g key={slot}>
            {models.map((m, mi) => {
              const v = values[m]?.[i] ?? 0;
              const h = (v / max) * plotH;
              y -= h;
              return h > 0 ? (
                <rect key={m} x={x} y={y} width={bw} height={h} fill={colorOf(mi)}>
                  <title>{`${m}: ${format(v)}`}</title>
                </rect>
              ) : null;
            })}
            {i % labelEvery === 0 ? (
              <text
                x={x + bw / 2}
                y={height - pad.bottom + 14}
                fontSize="10"
                textAnchor="middle"
                fill="var(--color-text-3)"
              >
                {label(slot)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}
