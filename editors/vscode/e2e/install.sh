#!/bin/sh
# Installs what the VS Code end-to-end test needs, idempotently:
#   - from Debian: chromium, ripgrep, and the headers code-server's native
#     modules build against (apt-get, only what is missing; needs root);
#   - from npm: code-server 4.99.4 and playwright-core (e2e/deps), into
#     $VSCODE_E2E_DEPS (default ~/.cache/fixpoint/vscode-e2e).
# Prints the install directory as its last line.
#
# @vscode/ripgrep's postinstall downloads rg from GitHub, which is not
# reachable here: its download cache is seeded with Debian's rg.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
deps=${VSCODE_E2E_DEPS:-${HOME}/.cache/fixpoint/vscode-e2e}

need=""
for p in chromium ripgrep libkrb5-dev libsecret-1-dev libxkbfile-dev pkg-config g++ make python3; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install.sh: missing Debian packages:$need. Run: sudo apt-get install -y$need" >&2
		exit 1
	fi
	echo "install.sh: apt-get install$need" >&2
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $need >&2
fi

mkdir -p "$deps/tmp"
# Both files change together; a changed package.json reinstalls.
if cmp -s "$here/deps/package.json" "$deps/package.json" && cmp -s "$here/deps/package-lock.json" "$deps/package-lock.json" &&
	[ -x "$deps/node_modules/.bin/code-server" ] && [ -f "$deps/installed" ]; then
	echo "$deps"
	exit 0
fi
rm -f "$deps/installed"
cp "$here/deps/package.json" "$here/deps/package-lock.json" "$deps/"

# @vscode/ripgrep 1.15.x looks for ripgrep-<tag>-<target>.tar.gz in
# $TMPDIR/vscode-ripgrep-cache-<its version> before asking GitHub.
for v in 1.15.9 1.15.10 1.15.11 1.15.13 1.15.14 1.16.0 1.17.0 1.17.1; do
	c="$deps/tmp/vscode-ripgrep-cache-$v"
	mkdir -p "$c"
	tar czf "$c/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C /usr/bin rg
done

cd "$deps"
# npm 11 reviews dependency install scripts: package.json's allowScripts
# approves code-server and argon2 here. code-server's postinstall runs
# `npm install` in lib/vscode and lib/vscode/extensions, whose package.json
# approve nothing, so the scripts their native modules need are approved
# there first (with npm ci --ignore-scripts, then npm rebuild).
# strict-allow-scripts makes any other script fail the install instead of
# running unreviewed. unsafe-perm: code-server's postinstall refuses to run
# as root without it. yes: node-pty's build runs `npx node-gyp`.
export TMPDIR="$deps/tmp" npm_config_strict_allow_scripts=true npm_config_unsafe_perm=true npm_config_yes=true \
	npm_config_audit=false npm_config_fund=false
npm ci --ignore-scripts >&2
vs="$deps/node_modules/code-server/lib/vscode"
approve() { # dir package... ("!package" denies: Windows-only modules)
	dir=$1
	shift
	node -e '
		const fs = require("fs"), [file, ...names] = process.argv.slice(1);
		const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
		pkg.allowScripts = Object.fromEntries(names.map((n) => (n[0] === "!" ? [n.slice(1), false] : [n, true])));
		fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
	' "$dir/package.json" "$@"
}
approve "$vs" @parcel/watcher @vscode/deviceid @vscode/ripgrep @vscode/spdlog kerberos native-watchdog node-pty \
	'!@vscode/windows-ca-certs' '!@vscode/windows-process-tree' '!@vscode/windows-registry' '!@vscode/windows-mutex' '!windows-foreground-love'
approve "$vs/extensions" @parcel/watcher esbuild
npm rebuild >&2

# The native modules code-server cannot start (or run a terminal) without.
for f in "$vs/node_modules/node-pty/build/Release/pty.node" "$vs/node_modules/@vscode/spdlog/build/Release/spdlog.node" \
	"$vs/node_modules/@vscode/ripgrep/bin/rg" "$vs/node_modules/@parcel/watcher-linux-x64-glibc/watcher.node" \
	"$deps/node_modules/argon2/lib/binding/napi-v3/argon2.node"; do
	if [ ! -e "$f" ]; then
		echo "install.sh: $f is missing (install scripts skipped?): npm rebuild in $vs" >&2
		(cd "$vs" && npm rebuild >&2)
		[ -e "$f" ] || { echo "install.sh: $f is still missing after npm rebuild; see the output above" >&2; exit 1; }
	fi
done
touch "$deps/installed"
echo "$deps"
