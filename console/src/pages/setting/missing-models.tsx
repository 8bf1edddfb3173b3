import { Alert } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { getUnpricedModels } from '../../api/pricing.ts';
import { tr } from '../../locale/translate.ts';

/**
 * The models enabled channels serve with neither a price nor a ratio (GET /api/models/missing's `unpriced`):
 * requests for them are refused until they are priced, so the ratio settings name them.
 */
export default function MissingModels({ values }: { values: Record<string, string> }) {
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    // Read again whenever the options are read back (after a save): a newly priced model leaves the list.
    void values;
    void getUnpricedModels().then((res) => setModels(res.success ? (res.data ?? []) : []));
  }, [values]);
  if (models.length === 0) return null;
  return (
    <Alert
      type="warning"
      style={{ marginBottom: 16 }}
      title={tr('setting.missingModels', { n: models.length })}
      content={models.join(', ')}
    />
  );
}
