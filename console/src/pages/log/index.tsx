import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Usage logs with totals and filters. */
export default function LogPage() {
  return <PagePlaceholder title="menu.log" />;
}
