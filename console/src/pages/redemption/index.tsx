import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Redemption-code administration (admin only). */
export default function RedemptionPage() {
  return <PagePlaceholder title="page.redemption.title" />;
}
