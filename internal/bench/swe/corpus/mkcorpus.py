#!/usr/bin/env python3
"""Builds instances of the real-bug corpus from one repository's history.

    mkcorpus.py MIRROR OWNER/NAME LANG [--max 3] [--out DIR] [--fixpoint BIN] [--round N] [--redo ID,...]
    mkcorpus.py --rename [--out DIR] [--fixpoint BIN]
    mkcorpus.py --refresh ID [DIR [BIN]]
    mkcorpus.py --retime ROUND [DIR [BIN]]
    mkcorpus.py --self-test

MIRROR is a git directory (a clone or bare mirror). Commits are taken by the
rule in README.md (newest first, no merges, subject matching "fix", test and
non-test source files touched, at most 3 non-test source files and 100
changed lines in them; in Rust the changes inside a `#[cfg(test)] mod`
block of a src file are test changes, the rest of the file's the fix); each candidate is verified natively with
`fixpoint test --sandbox bwrap --json` (the project's own test command on the
host; docker for Rust): the fail_to_pass tests must fail (or be missing) with the test patch
alone and pass with the gold patch. Kept instances are appended to
DIR/instances.jsonl with their archive in DIR/archives; the others, with the
reason, to DIR/rejected.txt; candidates decided before are not run again. The
test-command rules of README.md (a go.mod for a pre-modules Go tree, the
runner's step of a composed `npm test`) apply to every candidate alike. Not run in CI: it needs the network (npm) and
runs the projects' tests on the host.
"""
import argparse, hashlib, json, os, re, subprocess, sys, tempfile, time

SRC_EXT = {"go": (".go",), "python": (".py",), "node": (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"), "rust": (".rs",)}
MAX_ARCHIVE = 1_500_000
MAX_ARCHIVE_ROUND6 = 1_000_000  # the size rule: from round 6 a new instance's archive is at most 1.0 MB
MAX_ARCHIVE_ROUND8 = 500_000  # from round 8 at most 0.5 MB, so that a round of ~20 instances stays near 2.5 MB
CANDIDATE_BUDGET = 600  # the time rule: from round 6 a candidate's runs get 10 minutes, then it and its repository stop


def is_test(lang, p):
    parts = p.split("/")
    base = parts[-1]
    if lang == "go":
        return base.endswith("_test.go") or "testdata" in parts
    if lang == "python":
        return (base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"
                or any(d in ("tests", "test", "testing") for d in parts[:-1]))
    if lang == "node":
        return (any(d in ("test", "tests", "__tests__", "spec") for d in parts[:-1])
                or re.search(r"\.(test|spec|test-d)\.[cm]?[jt]sx?$", base) is not None
                or base in ("test.js", "test.mjs", "test.ts", "tests.js", "index.test-d.ts"))
    if lang == "rust":
        return parts[0] == "tests" or "tests" in parts[:-1] or base.endswith("_test.rs") or base == "tests.rs"
    return False


RUST_CFG_TEST = re.compile(r"^\s*#\[cfg\(test\)\]\s*$")
RUST_MOD_OPEN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def rust_test_lines(text):
    """The 0-based line numbers of a Rust source that lie inside a `#[cfg(test)] mod NAME { ... }` block, the
    attribute line through the closing brace (attributes, comments and blank lines between the two included).
    Braces are counted outside comments, strings, raw strings and char literals."""
    lines = text.splitlines(keepends=True)
    out = set()
    i = 0
    while i < len(lines):
        if not RUST_CFG_TEST.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and (lines[j].strip() == "" or lines[j].lstrip().startswith(("#[", "//"))) and not RUST_MOD_OPEN.match(lines[j]):
            j += 1
        if j >= len(lines) or not RUST_MOD_OPEN.match(lines[j]):
            i += 1
            continue
        end = rust_block_end(lines, j)
        if end is None:
            return out  # unbalanced: no block is claimed past here
        out.update(range(i, end + 1))
        i = end + 1
    return out


def rust_block_end(lines, start):
    """The line of the brace closing the first `{` on line start, or None."""
    text = "".join(lines[start:])
    depth, k, n, line = 0, 0, len(text), start
    while k < n:
        c = text[k]
        if c == "\n":
            line += 1
        elif text.startswith("//", k):
            k = text.find("\n", k)
            if k < 0:
                return None
            continue
        elif text.startswith("/*", k):
            nest, k = 1, k + 2
            while k < n and nest:
                if text.startswith("/*", k):
                    nest, k = nest + 1, k + 2
                elif text.startswith("*/", k):
                    nest, k = nest - 1, k + 2
                else:
                    line += text[k] == "\n"
                    k += 1
            continue
        elif re.match(r'b?r(#*)"', text[k:k + 260]) and (k == 0 or not (text[k - 1].isalnum() or text[k - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[k:])
            close = '"' + m.group(1)
            e = text.find(close, k + m.end())
            if e < 0:
                return None
            line += text.count("\n", k, e)
            k = e + len(close)
            continue
        elif c == '"':
            k += 1
            while k < n and text[k] != '"':
                if text[k] == "\\":
                    k += 1
                line += k < n and text[k] == "\n"
                k += 1
        elif c == "'":
            if text.startswith("\\", k + 1):
                e = text.find("'", k + 2)
                k = e if e > 0 else k
            elif k + 2 < n and text[k + 2] == "'":
                k += 2
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return line
        k += 1
    return None


def rust_split(old, new):
    """Splits one src file's change into its test part and the rest: returns mid, the old text with only the
    changes inside `#[cfg(test)] mod` blocks applied (a change whose old lines and new lines all lie in such
    blocks, of the old and the new text). test patch = old -> mid, gold patch = mid -> new. None when a change
    straddles a test block and other code (a single hunk cannot be split)."""
    import difflib
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ta, tb = rust_test_lines(old), rust_test_lines(new)
    mid = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            mid += a[i1:i2]
            continue
        ia = [i in ta for i in range(i1, i2)]
        jb = [j in tb for j in range(j1, j2)]
        if all(ia) and all(jb):
            mid += b[j1:j2]  # a test change
        elif not any(ia) and not any(jb):
            mid += a[i1:i2]  # a code change: the gold patch's
        elif op == "insert":
            mid += [b[j] for j in range(j1, j2) if jb[j - j1]]  # a new test block beside new code
        elif op == "delete":
            mid += [a[i] for i in range(i1, i2) if not ia[i - i1]]
        else:
            return None
    return "".join(mid)


def changed_lines(x, y):
    import difflib
    return sum(max(i2 - i1, 0) + max(j2 - j1, 0) for op, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, x.splitlines(), y.splitlines(), autojunk=False).get_opcodes() if op != "equal")


def self_test():
    """The hunk split on a small crate: a fix in the code and a new test in its #[cfg(test)] module."""
    old = ('pub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n'
           '    #[test]\n    fn one() {\n        assert_eq!(add(1, 1), 2, "{");\n    }\n}\n')
    new = ('pub fn add(a: u8, b: u8) -> u8 {\n    a.saturating_add(b)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n'
           '    #[test]\n    fn one() {\n        assert_eq!(add(1, 1), 2, "{");\n    }\n    #[test]\n    fn big() {\n'
           "        let _c = '}';\n        assert_eq!(add(255, 1), 255);\n    }\n}\n")
    assert rust_test_lines(old) == set(range(4, 12)), rust_test_lines(old)
    mid = rust_split(old, new)
    assert "a + b" in mid and "fn big" in mid and "saturating" not in mid, mid
    assert changed_lines(mid, new) == 2 and changed_lines(old, mid) == 5
    # A new test module appended with a code fix: both parts are found.
    bare = rust_split(old.split("\n\n#[cfg")[0] + "\n", new)
    assert "saturating" not in bare and "fn big" in bare and "mod tests {" in bare, bare
    # A change straddling the module's end and code after it cannot be split.
    assert rust_split(old, old[:-2] + "} // tests\nfn y() {}\n") is None
    # A code change after the module, apart from a test change in it: both parts are found.
    two = rust_split(old + "fn x() {}\n", new + "fn x() { 1 }\n")
    assert "fn big" in two and "fn x() {}" in two and "saturating" not in two, two
    # A doc-test the fix adds is the fix's, not a failing test; one the run before had is a test.
    assert fix_written("rust", "src/lib.rs - add", {}) and not fix_written("rust", "src/lib.rs - add", {"src/lib.rs - add": "fail"})
    assert not fix_written("rust", "tests::big", {}) and not fix_written("go", "A - B", {})
    # The runner's step of a composed npm test, through `npm run NAME`, less a reporter of its own.
    sc = {"test": "npm run lint && npm run mocha", "lint": "eslint .", "mocha": "mocha --reporter dot test/*.js"}
    assert runner_step(sc["test"], sc, 0) == "npx mocha --reporter tap test/*.js", runner_step(sc["test"], sc, 0)
    assert runner_step("xo && ava && tsd", {}, 0) == "npx ava --tap"
    assert runner_step("npm run lint && tsd", {"lint": "eslint ."}, 0) is None
    # A run before the fix cut by its time limit: only what it reported failing, or the test still running,
    # fails before; a test it never reached decides nothing.
    before = {"timed_out": True, "timeout": {"running": ["t3"]}, "tests": [{"id": "t1", "status": "pass"}, {"id": "t2", "status": "fail"}]}
    after = {"tests": [{"id": t, "status": "pass"} for t in ("t1", "t2", "t3", "t4")]}
    f2p, p2p, why = decide(before, after)
    assert (f2p, p2p, why) == (["t2", "t3"], ["t1"], ""), (f2p, p2p, why)
    del before["timed_out"], before["timeout"]
    assert decide(before, after)[0] == ["t2", "t3", "t4"]
    # An entry failing before the fix and absent after it (a tap suite's uncaught exception): fixpoint's verdict
    # wants every failure to pass by name, so no reply can verify it.
    before["tests"].append({"id": "TypeError: x is null", "status": "fail"})
    assert decide(before, after)[2].startswith("1 entries failing before the fix are absent after it"), decide(before, after)
    # No test block: nothing moves.
    assert rust_split("fn a() {}\n", "fn a() { 1 }\n") == "fn a() {}\n"
    print("ok")


def blob(mirror, rev, p):
    try:
        return git(mirror, "show", "%s:%s" % (rev, p))
    except subprocess.CalledProcessError:
        return ""


def split_diffs(splits):
    """Git-format diffs (full index) of each split file: old -> mid (test patch) and mid -> new (gold patch)."""
    if not splits:
        return "", ""
    with tempfile.TemporaryDirectory() as d:
        run = lambda *a: subprocess.run(["git", "-C", d, *a], capture_output=True, check=True).stdout.decode("utf-8", "replace")
        run("init", "-q")
        revs = []
        for k in range(3):
            for p, texts in splits.items():
                f = os.path.join(d, p)
                os.makedirs(os.path.dirname(f), exist_ok=True)
                if texts[k] == "" and os.path.exists(f):
                    os.remove(f)
                elif texts[k] != "":
                    open(f, "w").write(texts[k])
            run("add", "-A")
            run("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", str(k))
            revs.append(run("rev-parse", "HEAD").strip())
        return run("diff", "--full-index", revs[0], revs[1]), run("diff", "--full-index", revs[1], revs[2])


def git(mirror, *args, binary=False):
    out = subprocess.run(["git", "--git-dir", mirror, *args], capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode("utf-8", "replace")


def split_id(iid):
    return "heldout" if hashlib.sha256(iid.encode()).digest()[0] % 2 else "tuning"


def candidates(mirror, lang):
    log = git(mirror, "log", "--no-merges", "-i", "--grep=fix", "--format=%H%x09%P%x09%s")
    for line in log.splitlines():
        sha, parents, subject = line.split("\t", 2)
        if not re.search(r"fix", subject, re.I) or len(parents.split()) != 1:
            continue
        try:
            stat = git(mirror, "diff", "--numstat", parents, sha)
        except subprocess.CalledProcessError:
            continue  # objects the mirror lacks (large files): no diff, no candidate
        tests, src, lines, splits = [], [], 0, {}
        for row in stat.splitlines():
            add, dele, p = row.split("\t", 2)
            if add == "-":
                src = None
                break
            if is_test(lang, p):
                tests.append(p)
            elif lang == "rust" and p.endswith(".rs"):
                # The hunk rule: changes inside a `#[cfg(test)] mod` block of a src file are test changes.
                old, new = blob(mirror, parents, p), blob(mirror, sha, p)
                mid = rust_split(old, new)
                if mid is None:
                    src = None  # a change straddles a test block and code
                    break
                if mid == old:
                    src.append(p)
                    lines += int(add) + int(dele)
                elif mid == new:
                    tests.append(p)
                else:
                    src.append(p)
                    splits[p] = (old, mid, new)
                    lines += changed_lines(mid, new)
            elif p.endswith(SRC_EXT[lang]):
                src.append(p)
                lines += int(add) + int(dele)
        if src is None or not tests and not splits or not src or len(src) > 3 or lines > 100:
            continue
        yield sha, parents, subject, tests, src, splits


BACKEND = {"rust": "docker"}
NATIVE = {"go": "go test -count=1 ./...", "python": "python3 -m pytest -q -p no:cacheprovider",
          "node": "(test -d node_modules || npm install --no-audit --no-fund >/dev/null 2>&1) && npm test", "rust": "cargo test --offline"}


def native_time(lang, d, test_cmd=None, timeout=900, code=None):
    """Wall time of the project's own test command (or the instance's test_cmd) run natively (not in a sandbox).
    code, a list, receives the command's exit status."""
    if lang == "node":
        subprocess.run("npm install --no-audit --no-fund", shell=True, cwd=d, capture_output=True, timeout=timeout)
    cmd = test_cmd or (NATIVE[lang].split(" && ")[-1] if lang == "node" else NATIVE[lang])
    start = time.time()
    p = subprocess.run(as_native_user(cmd, d), shell=True, cwd=d, capture_output=True, timeout=timeout)
    if code is not None:
        code.append(p.returncode)
    return time.time() - start


def retime(rnd, out=os.path.dirname(os.path.abspath(__file__)), fixpoint="bin/fixpoint"):
    """mkcorpus.py --retime ROUND [DIR [BIN]]: times again, the way the builder did (both patches applied, one run
    through fixpoint first to warm the caches, then the native command), every instance of round ROUND, and
    rewrites native_seconds. For a round whose native runs were timed on a loaded machine (round 9: load 15-31):
    run it on a quiet one. An instance whose native command now exits non-zero keeps its old figure (printed)."""
    path = os.path.join(out, "instances.jsonl")
    lines = open(path).read().splitlines()
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        inst = json.loads(line)
        if inst.get("round") != int(rnd):
            continue
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["tar", "-xzf", os.path.join(out, inst["archive"]), "-C", d], check=True)
            for patch in (inst["test_patch"], inst["gold_patch"]):
                if patch.strip():
                    subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=d, input=patch.encode(), check=True)
            if inst["language"] == "node":
                subprocess.run("npm install --no-audit --no-fund", shell=True, cwd=d, capture_output=True, timeout=900)
            native(os.path.abspath(fixpoint), d, backend=BACKEND.get(inst["language"], "bwrap"), test_cmd=inst.get("test_cmd"))
            code = []
            secs = native_time(inst["language"], d, inst.get("test_cmd"), code=code)
            load = os.getloadavg()[0]
        if code and code[0] != 0:
            print("%s: native command exits %d; keeps %.2f s" % (inst["id"], code[0], inst["native_seconds"]), file=sys.stderr)
            continue
        print("%s: %.2f -> %.2f s (load %.1f)" % (inst["id"], inst["native_seconds"], secs, load), file=sys.stderr)
        inst["native_seconds"] = round(secs, 2)
        lines[k] = json.dumps(inst)
        open(path, "w").write("\n".join(lines) + "\n")


def as_native_user(cmd, d):
    """The native timing run as the unprivileged user MKCORPUS_NATIVE_USER names (from round 9, for Rust, whose
    sandboxed runs need docker and so a builder that may use it: the builder then runs as root, and only this
    native run, which executes the project's code on the host, drops to that user, who gets the tree)."""
    user = os.environ.get("MKCORPUS_NATIVE_USER")
    if not user:
        return cmd
    import pwd, shlex
    pw = pwd.getpwnam(user)
    subprocess.run(["chown", "-R", "%d:%d" % (pw.pw_uid, pw.pw_gid), d], check=True)
    return "setpriv --reuid=%d --regid=%d --clear-groups env -i HOME=%s PATH=/usr/local/bin:/usr/bin:/bin sh -c %s" % (
        pw.pw_uid, pw.pw_gid, shlex.quote(pw.pw_dir), shlex.quote(cmd))


def go_module(d, repo):
    """A Go tree from before modules (no go.mod anywhere) gets a go.mod naming its import path, with no
    requirements, so that fixpoint detects it on every backend (docker picks the go image by go.mod) and runs it
    as `go test ./...`. Returns whether it wrote one; such a tree is kept only when it needs no dependency."""
    for root, dirs, files in os.walk(d):
        if "go.mod" in files:
            return False
    with open(os.path.join(d, "go.mod"), "w") as fh:
        fh.write("module github.com/%s\n\ngo 1.16\n" % repo)
    return True


NODE_RUNNERS = {"ava": "npx ava --tap", "mocha": "npx mocha --reporter tap", "jest": "npx jest --json"}


def node_test_cmd(d):
    """The test command of a Node project whose `npm test` composes commands (`xo && ava && tsd`): its test
    runner's step alone, in a format fixpoint reads per test (ava and mocha as TAP, jest as JSON), since a composed
    script is judged by its exit code alone and a linter's failure would hide every test. The runner's own
    arguments (files, options) are kept, less a reporter of its own. A step `npm run NAME` stands for the script
    NAME (from round 5: `npm run lint && npm run mocha`). None when `npm test` is one command or runs no runner
    named here."""
    try:
        scripts = json.load(open(os.path.join(d, "package.json"))).get("scripts", {})
        script = scripts.get("test", "")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(script, str) or "&&" not in script:
        return None
    return runner_step(script, scripts, 0)


def runner_step(script, scripts, depth):
    for step in script.split("&&"):
        words = step.split()
        while words and words[0] in ("c8", "nyc", "npx", "cross-env") or (words and "=" in words[0]):
            words = words[1:]
        if len(words) >= 3 and words[0] in ("npm", "pnpm", "yarn") and words[1] in ("run", "run-script") and depth < 3:
            inner = scripts.get(words[2])
            if isinstance(inner, str):
                cmd = runner_step(inner, scripts, depth + 1)
                if cmd:
                    return cmd
            continue
        if words and words[0] in NODE_RUNNERS:
            args, k = [], 1
            while k < len(words):
                if words[k] in ("--reporter", "-R") and words[0] == "mocha":
                    k += 2
                    continue
                if words[k].startswith("--reporter=") and words[0] == "mocha":
                    k += 1
                    continue
                args.append(words[k])
                k += 1
            return " ".join([NODE_RUNNERS[words[0]]] + args)
    return None


def native(fixpoint, d, timeout=900, backend="bwrap", test_cmd=None):
    """The per-test results of the project's test command, as fixpoint names them (bwrap: the host's toolchains;
    docker for Rust, whose rustup toolchain under ~/.cargo bwrap does not bind)."""
    start = time.time()
    p = subprocess.run([fixpoint, "test", "--sandbox", backend, "--json", "--dir", d] + (["--test-cmd", test_cmd] if test_cmd else []),
                       capture_output=True, timeout=timeout, env={**os.environ, "CI": "true"})
    secs = time.time() - start
    try:
        rep = json.loads(p.stdout.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        return None, secs, (p.stderr.decode("utf-8", "replace").strip().splitlines() or ["no report"])[-1]
    if "error" in rep:
        return None, secs, rep["error"].splitlines()[0]
    return rep, rep.get("duration", secs * 1e9) / 1e9, ""


def statuses(rep):
    return {t["id"]: t["status"] for t in rep.get("tests") or []}


def decide(before, after, lang=""):
    """The naming rule: fail_to_pass and pass_to_pass by id from the runs before and after the fix (one command,
    one format), or why the candidate is rejected."""
    b, f = statuses(before), statuses(after)
    # A run before the fix that its time limit stopped decides nothing about the tests it never reached: a test
    # is failing before the fix only if that run reported it failing, or it was the one still running (it hung).
    # Round 7 took glob-parent-f923116's 16 tests as failing from a run that timed out as a whole at load 20;
    # 15 of them pass before the fix.
    cut = before.get("timed_out") or before.get("timeout")
    hung = set(((before.get("timeout") or {}).get("running")) or [])

    def failing_before(t):
        if cut:
            return b.get(t) not in (None, "pass", "skip") or t in hung
        return b.get(t) != "pass"
    f2p = sorted(t for t, s in f.items() if s == "pass" and failing_before(t) and not fix_written(lang, t, b))
    p2p = sorted(t for t, s in f.items() if s == "pass" and b.get(t) == "pass")
    broken = sorted(t for t, s in b.items() if s == "pass" and f.get(t) not in ("pass", "skip"))
    if not f2p:
        return None, None, "no test fails before and passes after (before: %d passed %d failed; after: %d passed %d failed)" % (
            before.get("passed", 0), before.get("failed", 0), after.get("passed", 0), after.get("failed", 0))
    if broken:
        return None, None, "the fix breaks %d passing tests natively" % len(broken)
    if after.get("failed", 0):
        return None, None, "%d tests still fail after the fix (flaky or environment)" % after["failed"]
    # fixpoint's verdict (agent/verify.go): a failure must reappear by name as a pass, absence is not a pass. An
    # entry failing before the fix that the run after it does not have (a tap suite's uncaught exception, reported
    # under its message) leaves the fix unverifiable by any reply (round 8: yallist-82ebcd0, node-which-f3bfeda).
    gone = sorted(t for t, s in b.items() if s not in ("pass", "skip") and t not in f and not cut)
    if gone:
        return None, None, "%d entries failing before the fix are absent after it (%s): fixpoint's verdict needs each to pass by name" % (
            len(gone), gone[0][:60])
    return f2p, p2p, ""


def rename(a, fixpoint):
    """Re-derives fail_to_pass and pass_to_pass of every kept instance with a test_cmd by decide(), from two native
    runs of that test_cmd (test patch alone, then with the gold patch), in place; an instance the rule no longer
    keeps moves to rejected.txt. Mechanical, for every such instance alike (held-out ones included): it prints
    counts only, so that nobody reads a held-out instance's tests."""
    path = os.path.join(a.out, "instances.jsonl")
    rows = [json.loads(l) for l in open(path) if l.strip()]
    kept, changed, dropped = [], 0, 0
    for inst in rows:
        if not inst.get("test_cmd"):
            kept.append(inst); continue
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["tar", "-xzf", os.path.join(a.out, inst["archive"]), "-C", d], check=True)
            def apply(patch):
                return not patch.strip() or subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=d,
                                                           input=patch.encode(), capture_output=True).returncode == 0
            why = ""
            if not apply(inst["test_patch"]):
                why = "test patch does not apply"
            if not why:
                before, _, err = native(fixpoint, d, backend=BACKEND.get(inst["language"], "bwrap"), test_cmd=inst["test_cmd"])
                why = "native run before the fix: " + err[:200] if before is None else ""
            if not why and not apply(inst["gold_patch"]):
                why = "gold patch does not apply"
            if not why:
                after, _, err = native(fixpoint, d, backend=BACKEND.get(inst["language"], "bwrap"), test_cmd=inst["test_cmd"])
                why = "native run after the fix: " + err[:200] if after is None else ""
            if not why:
                f2p, p2p, why = decide(before, after, inst["language"])
        if why:
            dropped += 1
            with open(os.path.join(a.out, "rejected.txt"), "a") as fh:
                fh.write("%s\t%s\t%s\n" % (inst["id"], inst["problem"][:80], "renamed by the one-command rule: " + " ".join(why.split())))
            continue
        if (f2p, p2p[:200]) != (inst["fail_to_pass"], inst.get("pass_to_pass") or []):
            changed += 1
        inst["fail_to_pass"], inst["pass_to_pass"] = f2p, p2p[:200]
        kept.append(inst)
    with open(path + ".tmp", "w") as fh:
        for inst in kept:
            fh.write(json.dumps(inst) + "\n")
    os.replace(path + ".tmp", path)
    print("rename: %d instances with a test_cmd, %d renamed, %d no longer kept" % (
        sum(1 for r in rows if r.get("test_cmd")), changed, dropped), file=sys.stderr)


def fix_written(lang, test, before):
    """A Rust doc-test ("src/lib.rs - Item") that the run before the fix did not have: its doc comment is in the
    gold patch (the hunk rule moves only #[cfg(test)] modules to the test patch), so the fix wrote the test; it is
    not a failing test the fix makes pass."""
    return lang == "rust" and " - " in test and test not in before


def refresh(iid, out=os.path.dirname(os.path.abspath(__file__)), fixpoint="bin/fixpoint"):
    """mkcorpus.py --refresh ID [DIR [BIN]]: derives a kept instance's fail_to_pass and pass_to_pass again from
    native runs before and after the fix, both with its test_cmd (the Node instances kept before round 5 had a run
    before the fix with `npm test` instead). Rewrites the instance's line; prints what changed."""
    path = os.path.join(out, "instances.jsonl")
    lines = open(path).read().splitlines()
    k = next(n for n, l in enumerate(lines) if l.strip() and json.loads(l)["id"] == iid)
    inst = json.loads(lines[k])
    backend = BACKEND.get(inst["language"], "bwrap")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["tar", "-xzf", os.path.join(out, inst["archive"]), "-C", d], check=True)
        def apply(patch):
            if patch.strip():
                subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=d, input=patch.encode(), check=True)
        if inst["language"] == "node":
            subprocess.run("npm install --no-audit --no-fund", shell=True, cwd=d, capture_output=True, timeout=900)
        apply(inst["test_patch"])
        before, _, err = native(os.path.abspath(fixpoint), d, backend=backend, test_cmd=inst.get("test_cmd"))
        if before is None:
            sys.exit("%s: native run before the fix: %s" % (iid, err))
        apply(inst["gold_patch"])
        after, _, err = native(os.path.abspath(fixpoint), d, backend=backend, test_cmd=inst.get("test_cmd"))
        if after is None:
            sys.exit("%s: native run after the fix: %s" % (iid, err))
    b, f = statuses(before), statuses(after)
    f2p = sorted(t for t, s in f.items() if s == "pass" and b.get(t) != "pass" and not fix_written(inst["language"], t, b))
    p2p = sorted(t for t, s in f.items() if s == "pass" and b.get(t) == "pass")
    broken = sorted(t for t, s in b.items() if s == "pass" and f.get(t) not in ("pass", "skip"))
    print("%s: fail_to_pass %d -> %d, pass_to_pass %d -> %d, broken %d, failing after %d (before: %d passed %d failed)" % (
        iid, len(inst["fail_to_pass"]), len(f2p), len(inst.get("pass_to_pass", [])), len(p2p), len(broken),
        after.get("failed", 0), before.get("passed", 0), before.get("failed", 0)), file=sys.stderr)
    if not f2p or broken or after.get("failed", 0):
        sys.exit("%s: does not reproduce with its test_cmd on both sides; left as it was" % iid)
    inst["fail_to_pass"], inst["pass_to_pass"] = f2p, p2p[:200]
    lines[k] = json.dumps(inst)
    open(path, "w").write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror", nargs="?"); ap.add_argument("repo", nargs="?"); ap.add_argument("lang", nargs="?")
    ap.add_argument("--max", type=int, default=3)
    ap.add_argument("--tries", type=int, default=8, help="candidates verified at most")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--fixpoint", default="bin/fixpoint")
    ap.add_argument("--rename", action="store_true", help="re-derive the test names of the kept instances with a test_cmd (see rename)")
    ap.add_argument("--round", type=int, default=10, help="the round that adds the instances (the instance's round)")
    ap.add_argument("--redo", default="", help="comma-separated ids: decide again these candidates only (rejected "
                    "under a rule since changed, e.g. tap ids with node-tap's '# time=' comment, fixed in round 7); "
                    "every other candidate is skipped")
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--refresh"]:
        return refresh(sys.argv[2], *sys.argv[3:])
    if sys.argv[1:2] == ["--retime"]:
        return retime(sys.argv[2], *sys.argv[3:])
    a = ap.parse_args()
    fixpoint = os.path.abspath(a.fixpoint)
    if a.rename:
        rename(a, fixpoint)
        return
    if not (a.mirror and a.repo and a.lang):
        ap.error("MIRROR OWNER/NAME LANG are required (or --rename)")
    os.makedirs(os.path.join(a.out, "archives"), exist_ok=True)
    kept = tried = 0
    redo = set(filter(None, a.redo.split(",")))
    # Candidates decided before are not run again: those kept count towards --max; those rejected are skipped,
    # except for reasons the builder has since removed (no test command detected; Rust on bwrap).
    kept_ids, rejected_ids = set(), set()
    if os.path.exists(os.path.join(a.out, "instances.jsonl")):
        kept_ids = {json.loads(l)["id"] for l in open(os.path.join(a.out, "instances.jsonl")) if l.strip()}
    if os.path.exists(os.path.join(a.out, "rejected.txt")):
        rejected_ids = {l.split("\t", 1)[0] for l in open(os.path.join(a.out, "rejected.txt"))
                        if "no test command" not in l and "0 passed 1 failed" not in l}
    rejected = open(os.path.join(a.out, "rejected.txt"), "a")
    for sha, parent, subject, tests, src, splits in candidates(a.mirror, a.lang):
        if kept >= a.max or tried >= a.tries:
            break
        tried += 1
        iid = "%s-%s" % (a.repo.replace("/", "__"), sha[:7])
        if redo:
            if iid not in redo:
                continue
            rejected_ids.discard(iid)
        # A Rust candidate rejected under the file rule is decided again when the hunk rule splits it otherwise.
        if iid in kept_ids or iid in rejected_ids and not splits:
            kept += iid in kept_ids
            continue
        def reject(why):
            why = " ".join(why.split())  # one line per candidate
            rejected.write("%s\t%s\t%s\n" % (iid, subject[:80], why)); rejected.flush()
            print("reject", iid, why, file=sys.stderr)
        split_test, split_gold = split_diffs(splits)
        whole = [p for p in src if p not in splits]
        test_patch = (git(a.mirror, "diff", "--full-index", parent, sha, "--", *tests) if tests else "") + split_test
        gold_patch = (git(a.mirror, "diff", "--full-index", parent, sha, "--", *whole) if whole else "") + split_gold
        try:
            archive = git(a.mirror, "archive", "--format=tar.gz", parent, binary=True)
        except subprocess.CalledProcessError as e:
            reject("git archive of the base fails: " + e.stderr.decode("utf-8", "replace").strip()[:150]); continue
        if len(archive) > MAX_ARCHIVE:
            reject("archive %d bytes > %d" % (len(archive), MAX_ARCHIVE)); continue
        if a.round >= 6 and len(archive) > MAX_ARCHIVE_ROUND6:
            reject("archive %d bytes > %d (round 6 size rule)" % (len(archive), MAX_ARCHIVE_ROUND6)); continue
        if a.round >= 8 and len(archive) > MAX_ARCHIVE_ROUND8:
            reject("archive %d bytes > %d (round 8 size rule)" % (len(archive), MAX_ARCHIVE_ROUND8)); continue
        # The time rule (from round 6): the candidate's runs share one budget; past it the candidate is rejected and
        # the repository stopped. Before round 6 each run had 900 s of its own.
        started = time.time()
        budget = (lambda: max(1, CANDIDATE_BUDGET - (time.time() - started))) if a.round >= 6 else (lambda: 900)
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["tar", "-xzf", "-", "-C", d], input=archive, check=True)
            if a.lang == "go" and go_module(d, a.repo):
                archive = subprocess.run(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-czf", "-", "-C", d, "."],
                                         capture_output=True, check=True).stdout
            def apply(patch):
                if not patch.strip():
                    return True
                r = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=d, input=patch.encode(), capture_output=True)
                return r.returncode == 0
            if not apply(test_patch):
                reject("test patch does not apply"); continue
            test_cmd = node_test_cmd(d) if a.lang == "node" else None
            try:
                # The same command before and after the fix: the names of both runs come from one format (before
                # round 5 the run before used `npm test`, judged by its exit code alone, so every test of a
                # test_cmd instance counted as missing before, hence failing-to-passing).
                before, secs, err = native(fixpoint, d, timeout=budget(), backend=BACKEND.get(a.lang, "bwrap"), test_cmd=test_cmd)
                if before is None:
                    reject("native run before the fix: " + err[:200]); continue
                if not apply(gold_patch):
                    reject("gold patch does not apply"); continue
                after, _, err = native(fixpoint, d, timeout=budget(), backend=BACKEND.get(a.lang, "bwrap"), test_cmd=test_cmd)
                if after is None:
                    reject("native run after the fix: " + err[:200]); continue
                secs = native_time(a.lang, d, test_cmd, timeout=budget())
            except subprocess.TimeoutExpired:
                if a.round >= 6:
                    reject("native runs passed %d seconds (round 6 time rule); repository stopped" % CANDIDATE_BUDGET)
                    break
                reject("native run timed out"); continue
        f2p, p2p, why = decide(before, after, a.lang)
        if why:
            reject(why); continue
        name = iid + ".tar.gz"
        with open(os.path.join(a.out, "archives", name), "wb") as fh:
            fh.write(archive)
        inst = {"id": iid, "repo": a.repo, "language": a.lang, "base_commit": parent, "fix_commit": sha,
                "archive": "archives/" + name, "test_patch": test_patch, "gold_patch": gold_patch,
                "fail_to_pass": f2p, "pass_to_pass": p2p[:200], "native_seconds": round(secs, 2),
                "split": split_id(iid), "problem": subject[:200], "round": a.round}
        if test_cmd:
            inst["test_cmd"] = test_cmd
        with open(os.path.join(a.out, "instances.jsonl"), "a") as fh:
            fh.write(json.dumps(inst) + "\n")
        kept += 1
        print("kept", iid, "f2p", len(f2p), file=sys.stderr)
    rejected.close()
    # One line per candidate, its latest reason; none for a candidate kept since.
    path = os.path.join(a.out, "rejected.txt")
    latest, kept_ids = {}, {json.loads(l)["id"] for l in open(os.path.join(a.out, "instances.jsonl")) if l.strip()}
    for l in open(path):
        latest[l.split("\t", 1)[0]] = l
    with open(path, "w") as fh:
        fh.writelines(l for iid, l in latest.items() if iid not in kept_ids)
    print("%s: kept %d of %d tried" % (a.repo, kept, tried), file=sys.stderr)


if __name__ == "__main__":
    main()
