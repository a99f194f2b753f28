#!/usr/bin/env python3
"""A tiny fake of `fixpoint serve` for the plugin's own tests.

It records every message it receives (one JSON object per line) to the file
named by argv[1], answers initialize with fixpoint's commands, asks for
workspace/configuration after initialized, and for fixpoint.fixTests plays a
work-done progress sequence. A solveGoal whose goal is "busy" gets an error.
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


def handle(m):
    method, ident = m.get("method"), m.get("id")
    if method == "initialize":
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
        send({"id": ident, "result": None})
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
