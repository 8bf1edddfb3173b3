import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Data dashboard (shown when enable_data_export). */
export default function DetailPage() {
  return <PagePlaceholder title="menu.detail" />;
}
