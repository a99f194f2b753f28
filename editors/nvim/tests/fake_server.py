#!/usr/bin/env python3
"""A tiny fake of `fixpoint serve` for the plugin's own tests.

It records every message it receives (one JSON object per line) to the file
named by argv[1], answers initialize with fixpoint's commands, asks for
workspace/configuration after initialized, and for fixpoint.fixTests plays a
work-done progress sequence. A solveGoal whose goal is "busy" gets an error;
one whose goal is "preview" plays a run with $/fixpoint/status that ends in
a workspace/applyEdit asking for confirmation (params.fixpoint.confirm),
creating new/dir/made.go, and records the client's answer as
{"applyResult": ...}. fixpoint.cancel answers that nothing is running.
"""
import json
import sys

LOG = open(sys.argv[1], "a", buffering=1)
IN = sys.stdin.buffer
OUT = sys.stdout.buffer
COMMANDS = ["fixpoint.solveGoal", "fixpoint.fixTests", "fixpoint.runTests", "fixpoint.cancel"]


def read():
    length = None
    while True:
        line = IN.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(IN.read(length))


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    OUT.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    OUT.flush()


def record(msg):
    LOG.write(json.dumps(msg) + "\n")


RESPONSES = {}  # id -> response that arrived while waiting for another


def call(method, params, ident):
    """Sends a request and waits for its response, handling what arrives meanwhile."""
    send({"id": ident, "method": method, "params": params})
    while ident not in RESPONSES:
        m = read()
        if m is None:
            sys.exit(0)
        record(m)
        if "method" not in m:
            RESPONSES[m.get("id")] = m
        else:
            handle(m)
    return RESPONSES.pop(ident)


def progress(token, value):
    send({"method": "$/progress", "params": {"token": token, "value": value}})


SEQ = [0]
ROOT = [""]  # the rootUri of initialize


def status(state, **kw):
    p = {"runId": "run-9", "kind": "solve", "state": state, "iteration": 0, "maxIterations": 6, "failing": 0, "passing": 0}
    p.update(kw)
    send({"method": "$/fixpoint/status", "params": p})


def preview():
    """A verified solve: statuses, then an applyEdit to confirm that creates a file."""
    SEQ[0] += 1
    status("running", message="Iteration 1/6 · planning", iteration=1, phase="plan")
    status("running", message="Iteration 1/6 · running tests · 2 failed", iteration=1, phase="test", failing=2)
    uri = ROOT[0] + "/new/dir/made.go"
    edit = {"documentChanges": [
        {"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}},
        {"textDocument": {"uri": uri, "version": None}, "edits": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "package dir\n"}]},
    ]}
    meta = {"runId": "run-9", "label": "preview", "description": "verified: 1 iteration, 3 tests passing", "confirm": True,
            "files": [{"path": "new/dir/made.go", "added": 1, "removed": 0}],
            "diff": "--- /dev/null\n+++ b/new/dir/made.go\n@@ -0,0 +1 @@\n+package dir\n"}
    resp = call("workspace/applyEdit", {"label": "fixpoint: Solve goal: preview", "edit": edit, "fixpoint": meta}, "apply-%d" % SEQ[0])
    record({"applyResult": resp.get("result")})
    if (resp.get("result") or {}).get("applied"):
        status("applied", message="Applied: 1 file changed, 3 tests passing", passing=3,
               files=meta["files"], diff=meta["diff"])
    else:
        status("verified-not-applied", message="Verified, not applied: you declined the edit", reason="declined", passing=3)


def handle(m):
    method, ident = m.get("method"), m.get("id")
    if method == "initialize":
        ROOT[0] = (m.get("params") or {}).get("rootUri") or ""
        send({"id": ident, "result": {
            "capabilities": {"textDocumentSync": 1, "executeCommandProvider": {"commands": COMMANDS}},
            "serverInfo": {"name": "fake-fixpoint"},
        }})
    elif method == "initialized":
        resp = call("workspace/configuration", {"items": [{"section": "fixpoint"}]}, "cfg-1")
        record({"configuration": resp.get("result")})
    elif method == "workspace/executeCommand":
        p = m["params"]
        args = p.get("arguments") or [{}]
        if p["command"] == "fixpoint.solveGoal" and args and args[0].get("goal") == "busy":
            send({"id": ident, "error": {"code": -32000, "message": "a run is already in progress for this folder"}})
            return
        if p["command"] == "fixpoint.cancel":
            send({"id": ident, "result": {"started": False, "message": "nothing to cancel: no fixpoint run is active"}})
            return
        send({"id": ident, "result": None})
        if p["command"] == "fixpoint.solveGoal" and args and args[0].get("goal") == "preview":
            preview()
        if p["command"] == "fixpoint.fixTests":
            call("window/workDoneProgress/create", {"token": "run-1"}, "prog-1")
            progress("run-1", {"kind": "begin", "title": "fixpoint: Fix until tests pass", "message": "starting", "cancellable": True})
            progress("run-1", {"kind": "report", "message": "Iteration 1/6 · planning"})
            progress("run-1", {"kind": "report", "message": "Iteration 2/6 · running tests · 3 failed"})
            progress("run-1", {"kind": "end", "message": "Verified"})
            send({"method": "window/logMessage", "params": {"type": 3, "message": "progress-done"}})
    elif method == "shutdown":
        send({"id": ident, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif ident is not None:
        send({"id": ident, "error": {"code": -32601, "message": "method not found: " + str(method)}})


def main():
    while True:
        m = read()
        if m is None:
            return
        record(m)
        if "method" in m:
            handle(m)


main()
