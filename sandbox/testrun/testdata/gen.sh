#!/bin/sh
# gen.sh regenerates the raw runner outputs under raw/ from the projects under
# projects/ by running the real tools on this machine (go, python3 -m pytest,
# python3 -m unittest, node --test). Each project is copied to a scratch
# directory and the scratch path is rewritten to /workspace afterwards, so the
# outputs look as they do inside a sandbox. Run from this directory:
#   sh gen.sh            # all cases
#   sh gen.sh go-panic   # one case
# Then refresh the parsed goldens: go test ./sandbox/testrun -run Golden -update
set -u
# Debian's python3 has pytest (apt-get install python3-pytest); keep it ahead of pyenv shims.
PATH=/usr/bin:$PATH
here=$(pwd)
scratch=$(mktemp -d /tmp/fixpoint-testrun-gen.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# case NAME PROJECT REPORT CMD...
case_() {
	name=$1 project=$2 report=$3
	shift 3
	if [ -n "${only:-}" ] && [ "$only" != "$name" ]; then return; fi
	ws=$scratch/workspace
	rm -rf "$ws" && mkdir -p "$ws" && cp -r "projects/$project/." "$ws/"
	out=raw/$name
	rm -rf "$out" && mkdir -p "$out"
	(cd "$ws" && env -u GOFLAGS "$@" >"$scratch/stdout" 2>"$scratch/stderr"; echo $? >"$scratch/exit")
	printf '%s\n' "$*" >"$out/cmd"
	cp "$scratch/exit" "$out/exit"
	sed "s#$ws#/workspace#g" "$scratch/stdout" >"$out/stdout"
	sed "s#$ws#/workspace#g" "$scratch/stderr" >"$out/stderr"
	if [ "$report" != - ] && [ -f "$ws/$report" ]; then
		sed "s#$ws#/workspace#g" "$ws/$report" >"$out/report"
	fi
	case $name in *-hang) # killed as the sandbox kills at its time limit
		echo 124 >"$out/exit" && touch "$out/timedout" ;;
	esac
	echo "$name: exit $(cat "$out/exit")"
}
only=${1:-}

case_ go-pass gopass - go test -json ./...
case_ go-fail gofail - go test -json ./...
case_ go-panic gopanic - go test -json ./...
case_ go-build gobuild - go test -json ./...
case_ go-testbuild gotesterr - go test -json ./...
# Go before 1.24 printed build errors as text on stderr; this GODEBUG restores that.
case_ go-build-text gobuild - env GODEBUG=gotestjsonbuildtext=1 go test -json ./...
case_ go-timeout gotimeout - go test -json -timeout=3s ./...
case_ go-nomod gonomod - go test -json ./...

junit=.fixpoint/junit.xml
pytest="python3 -m pytest -v -rA --junitxml=$junit -p no:cacheprovider"
case_ pytest-pass pypass $junit $pytest
case_ pytest-fail pyfail $junit $pytest
case_ pytest-collect pycollect $junit $pytest
case_ pytest-hang pyhang - timeout -s KILL 5 $pytest
case_ unittest-fail pyunit - python3 -m unittest discover -v
case_ unittest-syntax pyunitsyntax - python3 -m unittest discover -v

case_ node-pass nodepass - node --test --test-reporter=tap
case_ node-fail nodefail - node --test --test-reporter=tap
case_ node-syntax nodesyntax - node --test --test-reporter=tap
case_ npm-fail npmfail - npm test --silent -- --test-reporter=tap
# node --test's reporters as lang/node gives them: TAP on stdout, the tests
# that started on stderr (testrun.TAPStartedPrefix).
started="data:text/javascript,export default async function*(s){for await(const e of s){if(e.type==='test:dequeue')yield 'fixpoint-started '+JSON.stringify({n:e.data.name,f:e.data.file,l:e.data.nesting})+String.fromCharCode(10);else yield ''}}"
case_ node-hang nodehang - timeout -s KILL 5 node --test --test-reporter=tap --test-reporter-destination=stdout "--test-reporter=$started" --test-reporter-destination=stderr
case_ npm-hang npmhang - timeout -s KILL 5 npm test --silent -- --test-reporter=tap --test-reporter-destination=stdout "--test-reporter=$started" --test-reporter-destination=stderr

# The JavaScript runner cases (jest-*, mocha-*, vitest-*, node-sniffer) come
# from real projects in /work/shared/realworld, which need their npm
# dependencies; they were made by hand, not by this script:
#   tar -xzf ms-3.0.0-canary.1.tar.gz && cd ms-3.0.0-canary.1 && npm ci
#   npm test --silent -- --json --outputFile=.fixpoint/jest.json     # jest-pass
#   (jest-fail: src/index.test.ts line 227 expects '2d'; jest-tserror: a
#   line `const broken: number = "x";` added at the top of the test file)
#   bytes-3.1.2: npm install, then
#   npm test --silent -- --reporter json --reporter-option output=.fixpoint/mocha.json
#   with `npm test` (spec reporter) saved as raw/<case>/native for the counts
#   (mocha-fail: line 28 of test/byte-format.js expects '101b', and a describe
#   block with a throwing test and a skipped one appended to test/byte-parse.js)
#   vitest: `npm install -D vitest@2` in a scratch ESM package with
#   src/math.test.js (4 pass, 1 skip, 1 todo, nested describe),
#   src/fail.test.js (1 fail, 1 pass) and, for vitest-broken, a test file
#   importing a missing ./nope.js; then
#   npm test --silent -- --run --reporter=default --reporter=json --outputFile=.fixpoint/vitest.json
#   html-encoding-sniffer-6.0.0: npm ci && npm test --silent -- --test-reporter=tap
# Each scratch path was rewritten to /workspace as above; npm's own
# "npm warn" lines were dropped from stderr.
#   tap16-which-1/-2: npm/node-which at 297db11 (tap 16.3), run twice as uid 65534 in
#   fixpoint-sandbox-node:22.23.3 over the node_modules `fixpoint test --sandbox docker` installed,
#   `npm test --silent` with TAP_TIMEOUT=0 (the load made tap's 30 s per-file limit bite);
#   tap18-1/-2: a scratch package with tap 18.8 and one test file (2 passing, 1 nested failing,
#   1 skipped test), two `fixpoint test --sandbox docker --json` runs, stdout taken from the
#   report's output (npm test --silent printed nothing else). Each pair differs only in
#   the "# time=" comments, which must not reach the ids.
