import { Form, type FormInstance, Input, Typography } from '@arco-design/web-react';
import { tr } from '../../locale/translate.ts';
import { type ChannelFormValues, MAPPING_EXAMPLE, STATUS_CODE_EXAMPLE } from './channel-form-values.ts';

/** The model mapping and the status code override (JSON objects); a click on the hint fills in the example. */
export function ChannelMappingFields({ form }: { form: FormInstance<ChannelFormValues> }) {
  return (
    <>
      <Form.Item
        label={tr('channelForm.modelMapping')}
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => form.setFieldValue('model_mapping', MAPPING_EXAMPLE)}
          >
            {tr('channelForm.optionalAJsonStringThat')}
          </Typography.Text>
        }
        field="model_mapping"
      >
        <Input.TextArea
          placeholder={`${tr('common.forExample')}\n${MAPPING_EXAMPLE}`}
          autoSize={{ minRows: 3, maxRows: 10 }}
        />
      </Form.Item>
      <Form.Item
        label={tr('channelForm.statusCodeOverride')}
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => form.setFieldValue('status_code_mapping', STATUS_CODE_EXAMPLE)}
          >
            {tr('channelForm.optionalOverridesReturnedStatusCodes')}
          </Typography.Text>
        }
        field="status_code_mapping"
      >
        <Input.TextArea
          placeholder={`${tr('common.forExample')}\n${STATUS_CODE_EXAMPLE}`}
          autoSize={{ minRows: 2, maxRows: 6 }}
        />
      </Form.Item>
    </>
  );
}
