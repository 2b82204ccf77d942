#!/usr/bin/env python3
"""A stdio MCP server for the limit tests: many tools, one huge result, or none at all.
usage: bigmcp.py [--tools N] [--big MIB] [--silent]
  --tools N   offers N tools op_000 … (default 300), each answering "op N: <args>"
  --big MIB   adds big_result, which answers MIB MiB of text (default 10)
  --silent    reads requests and never answers (a server that hangs at start)
It answers initialize with the client's protocol version when it knows it, else 2025-11-25."""
import json, sys

args = sys.argv[1:]
def opt(name, default):
    if name in args:
        return int(args[args.index(name) + 1])
    return default
ntools, big, silent = opt("--tools", 300), opt("--big", 10), "--silent" in args
KNOWN = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()

def tools():
    out = [{"name": "op_%03d" % i, "description": "Performs generic operation %d of the big test server on a value." % i,
            "inputSchema": {"type": "object", "properties": {"value": {"type": "string"}}, "required": None if i % 2 else ["value"]}}
           for i in range(ntools)]
    if big:
        out.append({"name": "big_result", "description": "Returns a very large text report (%d MiB)." % big,
                    "inputSchema": {"type": "object", "properties": {}}})
    return out

for line in sys.stdin:
    if silent:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    mid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
    if mid is None:
        continue  # notifications
    if method == "initialize":
        v = params.get("protocolVersion")
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": v if v in KNOWN else KNOWN[0],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "bigmcp", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools()}})
    elif method == "tools/call":
        name = params.get("name")
        if name == "big_result":
            row = "row %08d: the quick brown fox jumps over the lazy dog 0123456789\n"
            n = big * (1 << 20) // len(row % 0)
            text = "".join(row % i for i in range(n))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        elif name and name.startswith("op_"):
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "%s: %s" % (name, json.dumps(params.get("arguments")))}]}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool %s" % name}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})
