import { Tag, Tooltip } from '@arco-design/web-react';

/** A name cut to its cell with an ellipsis, whole in a tooltip. */
export function CutText({ text }: { text: string }) {
  return (
    <Tooltip content={text}>
      <span className="aigw-cut">{text}</span>
    </Tooltip>
  );
}

/** A tag whose text is cut to the cell, whole in a tooltip (long model and token names). */
export function CutTag({ text, color }: { text: string; color: string }) {
  return (
    <Tooltip content={text}>
      <Tag color={color} className="aigw-cut-tag">
        {text}
      </Tag>
    </Tooltip>
  );
}
