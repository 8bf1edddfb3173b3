import { Collapse, Form, Input, Space, Switch } from '@arco-design/web-react';
import { tr } from '../../locale/translate.ts';

const SWITCHES = [
  ['system_prompt_override', 'channelOverrides.systemPromptOverride'],
  ['force_format', 'channelOverrides.forceFormat'],
  ['thinking_to_content', 'channelOverrides.thinkingToContent'],
  ['pass_through_body_enabled', 'channelOverrides.passThroughBody'],
] as const;

/**
 * The overrides (param, header, system prompt, proxy, the setting switches, other settings) in a
 * collapsed section, open from the start when the channel has any.
 */
export function ChannelOverridesSection({ open }: { open: boolean }) {
  return (
    <Collapse bordered={false} className="aigw-channel-overrides" defaultActiveKey={open ? ['overrides'] : []}>
      <Collapse.Item name="overrides" header={tr('channelOverrides.section')}>
        <Form.Item
          label={tr('channelOverrides.paramOverride')}
          extra={tr('channelOverrides.paramOverrideExtra')}
          field="overrides.param_override"
        >
          <Input.TextArea
            name="param_override"
            placeholder='{"temperature": 0.2}'
            autoSize={{ minRows: 2, maxRows: 10 }}
          />
        </Form.Item>
        <Form.Item
          label={tr('channelOverrides.headerOverride')}
          extra={tr('channelOverrides.headerOverrideExtra')}
          field="overrides.header_override"
        >
          <Input.TextArea
            name="header_override"
            placeholder='{"Authorization": "Bearer {api_key}"}'
            autoSize={{ minRows: 2, maxRows: 8 }}
          />
        </Form.Item>
        <Form.Item
          label={tr('channelOverrides.systemPrompt')}
          extra={tr('channelOverrides.systemPromptExtra')}
          field="overrides.system_prompt"
        >
          <Input.TextArea name="system_prompt" autoSize={{ minRows: 2, maxRows: 8 }} />
        </Form.Item>
        <Form.Item label={tr('channelOverrides.proxy')} field="overrides.proxy">
          <Input name="proxy" placeholder={tr('channelOverrides.proxyPlaceholder')} />
        </Form.Item>
        <Space size="large" wrap>
          {SWITCHES.map(([key, label]) => (
            <Form.Item key={key} label={tr(label)} field={`overrides.${key}`} triggerPropName="checked">
              <Switch />
            </Form.Item>
          ))}
        </Space>
        <Form.Item
          label={tr('channelOverrides.otherSettings')}
          extra={tr('channelOverrides.otherSettingsExtra')}
          field="overrides.settings"
        >
          <Input.TextArea name="settings" autoSize={{ minRows: 1, maxRows: 6 }} />
        </Form.Item>
      </Collapse.Item>
    </Collapse>
  );
}
