import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Model pricing table with the group-ratio banner. */
export default function PricingPage() {
  return <PagePlaceholder title="menu.pricing" />;
}
