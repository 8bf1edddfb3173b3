# Sourced by pnpm.sh and start.sh (and so by the test command, which runs everything through
# pnpm.sh): puts the Node.js that setup.sh installed in .local/node first in PATH. setup.sh installs
# it only when the machine's Node.js is older than the supported line (24), so on a machine with a
# current Node.js this changes nothing.
_aigw_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
if [ -x "$_aigw_root/.local/node/bin/node" ]; then
  case ":$PATH:" in
    *":$_aigw_root/.local/node/bin:"*) ;;
    *) export PATH="$_aigw_root/.local/node/bin:$PATH" ;;
  esac
fi
unset _aigw_root
