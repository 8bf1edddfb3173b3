import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Wallet: balance, redeem code, online top-up. */
export default function TopupPage() {
  return <PagePlaceholder title="menu.topup" />;
}
