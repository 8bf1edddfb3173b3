import { useT } from '../locale/index.tsx';
import { useStatus } from '../store/status-context.tsx';

/** "v1.2.3" whether or not the server's version carries the v. */
function withV(version: string): string {
  return version.startsWith('v') ? version : `v${version}`;
}

/** The product name with version and credits, or the admin's footer HTML when set. */
export default function Footer() {
  const { status } = useStatus();
  const t = useT();
  if (status.footer_html) {
    // The footer is the super admin's own HTML setting (spec 01 "Other tab"), rendered as given.
    // biome-ignore lint/security/noDangerouslySetInnerHtml: admin-authored footer HTML by design
    return <footer className="aigw-footer" dangerouslySetInnerHTML={{ __html: status.footer_html }} />;
  }
  const version = withV(status.version || (typeof __APP_VERSION__ === 'string' ? __APP_VERSION__ : '0.1.0'));
  return (
    <footer className="aigw-footer">
      <span>
        {t('app.name')} {version}
      </span>
      <span className="aigw-footer-sep">·</span>
      <span>{t('footer.credits')}</span>
    </footer>
  );
}
