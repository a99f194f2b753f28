#!/usr/bin/env python3
"""Builds instances of the real-bug corpus from one repository's history.

    mkcorpus.py MIRROR OWNER/NAME LANG [--max 3] [--out DIR] [--fixpoint BIN]
    mkcorpus.py --rename [--out DIR] [--fixpoint BIN]

MIRROR is a git directory (a clone or bare mirror). Commits are taken by the
rule in README.md (newest first, no merges, subject matching "fix", test and
non-test source files touched, at most 3 non-test source files and 100
changed lines in them); each candidate is verified natively with
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
        stat = git(mirror, "diff", "--numstat", parents, sha)
        tests, src, lines = [], [], 0
        for row in stat.splitlines():
            add, dele, p = row.split("\t", 2)
            if add == "-":
                src = None
                break
            if is_test(lang, p):
                tests.append(p)
            elif p.endswith(SRC_EXT[lang]):
                src.append(p)
                lines += int(add) + int(dele)
        if src is None or not tests or not src or len(src) > 3 or lines > 100:
            continue
        yield sha, parents, subject, tests, src


BACKEND = {"rust": "docker"}
NATIVE = {"go": "go test -count=1 ./...", "python": "python3 -m pytest -q -p no:cacheprovider",
          "node": "(test -d node_modules || npm install --no-audit --no-fund >/dev/null 2>&1) && npm test", "rust": "cargo test --offline"}


def native_time(lang, d, test_cmd=None):
    """Wall time of the project's own test command (or the instance's test_cmd) run natively (not in a sandbox)."""
    if lang == "node":
        subprocess.run("npm install --no-audit --no-fund", shell=True, cwd=d, capture_output=True, timeout=900)
    cmd = test_cmd or (NATIVE[lang].split(" && ")[-1] if lang == "node" else NATIVE[lang])
    start = time.time()
    subprocess.run(cmd, shell=True, cwd=d, capture_output=True, timeout=900)
    return time.time() - start


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
    arguments (files, options) are kept. None when `npm test` is one command or runs no runner named here."""
    try:
        script = json.load(open(os.path.join(d, "package.json"))).get("scripts", {}).get("test", "")
    except (OSError, ValueError, AttributeError):
        return None
    if "&&" not in script:
        return None
    for step in script.split("&&"):
        words = step.split()
        while words and words[0] in ("c8", "nyc", "npx", "cross-env") or (words and "=" in words[0]):
            words = words[1:]
        if words and words[0] in NODE_RUNNERS:
            return " ".join([NODE_RUNNERS[words[0]]] + words[1:])
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


def decide(before, after):
    """The naming rule: fail_to_pass and pass_to_pass by id from the runs before and after the fix (one command,
    one format), or why the candidate is rejected."""
    b, f = statuses(before), statuses(after)
    f2p = sorted(t for t, s in f.items() if s == "pass" and b.get(t) != "pass")
    p2p = sorted(t for t, s in f.items() if s == "pass" and b.get(t) == "pass")
    broken = sorted(t for t, s in b.items() if s == "pass" and f.get(t) not in ("pass", "skip"))
    if not f2p:
        return None, None, "no test fails before and passes after (before: %d passed %d failed; after: %d passed %d failed)" % (
            before.get("passed", 0), before.get("failed", 0), after.get("passed", 0), after.get("failed", 0))
    if broken:
        return None, None, "the fix breaks %d passing tests natively" % len(broken)
    if after.get("failed", 0):
        return None, None, "%d tests still fail after the fix (flaky or environment)" % after["failed"]
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
                f2p, p2p, why = decide(before, after)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror", nargs="?"); ap.add_argument("repo", nargs="?"); ap.add_argument("lang", nargs="?")
    ap.add_argument("--max", type=int, default=3)
    ap.add_argument("--tries", type=int, default=8, help="candidates verified at most")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--fixpoint", default="bin/fixpoint")
    ap.add_argument("--rename", action="store_true", help="re-derive the test names of the kept instances with a test_cmd (see rename)")
    a = ap.parse_args()
    fixpoint = os.path.abspath(a.fixpoint)
    if a.rename:
        rename(a, fixpoint)
        return
    if not (a.mirror and a.repo and a.lang):
        ap.error("MIRROR OWNER/NAME LANG are required (or --rename)")
    os.makedirs(os.path.join(a.out, "archives"), exist_ok=True)
    kept = tried = 0
    # Candidates decided before are not run again: those kept count towards --max; those rejected are skipped,
    # except for reasons the builder has since removed (no test command detected; Rust on bwrap).
    kept_ids, rejected_ids = set(), set()
    if os.path.exists(os.path.join(a.out, "instances.jsonl")):
        kept_ids = {json.loads(l)["id"] for l in open(os.path.join(a.out, "instances.jsonl")) if l.strip()}
    if os.path.exists(os.path.join(a.out, "rejected.txt")):
        rejected_ids = {l.split("\t", 1)[0] for l in open(os.path.join(a.out, "rejected.txt"))
                        if "no test command" not in l and "0 passed 1 failed" not in l}
    rejected = open(os.path.join(a.out, "rejected.txt"), "a")
    for sha, parent, subject, tests, src in candidates(a.mirror, a.lang):
        if kept >= a.max or tried >= a.tries:
            break
        tried += 1
        iid = "%s-%s" % (a.repo.replace("/", "__"), sha[:7])
        if iid in kept_ids or iid in rejected_ids:
            kept += iid in kept_ids
            continue
        def reject(why):
            why = " ".join(why.split())  # one line per candidate
            rejected.write("%s\t%s\t%s\n" % (iid, subject[:80], why)); rejected.flush()
            print("reject", iid, why, file=sys.stderr)
        test_patch = git(a.mirror, "diff", "--full-index", parent, sha, "--", *tests)
        gold_patch = git(a.mirror, "diff", "--full-index", parent, sha, "--", *src)
        try:
            archive = git(a.mirror, "archive", "--format=tar.gz", parent, binary=True)
        except subprocess.CalledProcessError as e:
            reject("git archive of the base fails: " + e.stderr.decode("utf-8", "replace").strip()[:150]); continue
        if len(archive) > MAX_ARCHIVE:
            reject("archive %d bytes > %d" % (len(archive), MAX_ARCHIVE)); continue
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
                before, secs, err = native(fixpoint, d, backend=BACKEND.get(a.lang, "bwrap"), test_cmd=test_cmd)
            except subprocess.TimeoutExpired:
                reject("native run timed out"); continue
            if before is None:
                reject("native run before the fix: " + err[:200]); continue
            if not apply(gold_patch):
                reject("gold patch does not apply"); continue
            try:
                after, _, err = native(fixpoint, d, backend=BACKEND.get(a.lang, "bwrap"), test_cmd=test_cmd)
            except subprocess.TimeoutExpired:
                reject("native run after the fix timed out"); continue
            if after is None:
                reject("native run after the fix: " + err[:200]); continue
            try:
                secs = native_time(a.lang, d, test_cmd)
            except subprocess.TimeoutExpired:
                reject("native timing run timed out"); continue
        f2p, p2p, why = decide(before, after)
        if why:
            reject(why); continue
        name = iid + ".tar.gz"
        with open(os.path.join(a.out, "archives", name), "wb") as fh:
            fh.write(archive)
        inst = {"id": iid, "repo": a.repo, "language": a.lang, "base_commit": parent, "fix_commit": sha,
                "archive": "archives/" + name, "test_patch": test_patch, "gold_patch": gold_patch,
                "fail_to_pass": f2p, "pass_to_pass": p2p[:200], "native_seconds": round(secs, 2),
                "split": split_id(iid), "problem": subject[:200]}
        if test_cmd:
            inst["test_cmd"] = test_cmd
        with open(os.path.join(a.out, "instances.jsonl"), "a") as fh:
            fh.write(json.dumps(inst) + "\n")
        kept += 1
        print("kept", iid, "f2p", len(f2p), file=sys.stderr)
    print("%s: kept %d of %d tried" % (a.repo, kept, tried), file=sys.stderr)


if __name__ == "__main__":
    main()
