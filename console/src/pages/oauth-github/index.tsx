import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Code-hosting OAuth callback (code and state in the query). */
export default function OAuthGithubPage() {
  return <PagePlaceholder title="route.oauthGithub" />;
}
