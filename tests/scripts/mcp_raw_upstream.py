"""An upstream that speaks MCP's JSON-RPC by hand, to answer what the SDK would not:
`badlist` lists tools in a shape MCP does not have; `errorlist` refuses tools/list with
an error of several lines."""

import json
import sys

mode = sys.argv[1]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, rid = message.get("method"), message["id"]
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
        answer = {"jsonrpc": "2.0", "id": rid, "result": result}
    elif method == "tools/list" and mode == "badlist":
        answer = {"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": 5}]}}
    elif method == "tools/list" and mode == "errorlist":
        said = "no tools today\nTraceback (most recent call last):\n  boom"
        error = {"code": -32603, "message": said}
        answer = {"jsonrpc": "2.0", "id": rid, "error": error}
    else:
        answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
