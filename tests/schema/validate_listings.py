#!/usr/bin/env python3
"""Validate what the example servers list against the official MCP JSON Schemas.

For each example binary it runs the initialize handshake over stdio, fetches
tools/list, resources/list, resources/templates/list and prompts/list, and
checks every Tool, Resource, ResourceTemplate and Prompt (and the 2025-11-25
list results and InitializeResult) against the schemas of 2025-11-25 and
2026-07-28 in SCHEMA_DIR (the official schema files, named
<revision>.json). Needs the `jsonschema` package. Prints one line per check and ends with
"N passed, M failed"; exits non-zero on any failure.

usage: validate_listings.py SCHEMA_DIR EXAMPLE_BINARY...
"""
import json
import subprocess
import sys

from jsonschema import Draft202012Validator


def validator(schema_file, definition):
    with open(schema_file) as f:
        full = json.load(f)
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": full["$defs"]})


def talk(binary, requests):
    lines = [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": m, "params": p}) for i, (m, p) in enumerate(requests)]
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "schema-check", "version": "0"}}
    payload = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}) + "\n"
    payload += json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    payload += "\n".join(lines) + "\n"
    out = subprocess.run([binary], input=payload.encode(), capture_output=True, timeout=60, check=True).stdout
    replies = {}
    for line in out.decode().splitlines():
        msg = json.loads(line)
        replies[msg.get("id")] = msg
    return replies


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_dir, binaries = sys.argv[1], sys.argv[2:]
    passed = failed = 0

    def check(label, schema_version, definition, instance):
        nonlocal passed, failed
        errors = sorted(validator(f"{schema_dir}/{schema_version}.json", definition).iter_errors(instance), key=str)
        if errors:
            failed += 1
            print(f"FAIL {label} vs {schema_version} {definition}: {errors[0].message} at {list(errors[0].absolute_path)}")
        else:
            passed += 1
            print(f"PASS {label} vs {schema_version} {definition}")

    requests = [("tools/list", {}), ("resources/list", {}), ("resources/templates/list", {}), ("prompts/list", {})]
    for binary in binaries:
        name = binary.rsplit("/", 1)[-1]
        replies = talk(binary, requests)
        check(f"{name} initialize", "2025-11-25", "InitializeResult", replies[0]["result"])
        listings = [("tools", "Tool", "ListToolsResult", 1), ("resources", "Resource", "ListResourcesResult", 2),
                    ("resourceTemplates", "ResourceTemplate", "ListResourceTemplatesResult", 3), ("prompts", "Prompt", "ListPromptsResult", 4)]
        for key, item_def, result_def, rid in listings:
            reply = replies.get(rid, {})
            if "result" not in reply:
                continue  # family not offered by this server (-32601)
            check(f"{name} {key} result", "2025-11-25", result_def, reply["result"])
            for item in reply["result"][key]:
                label = f"{name} {key[:-1]} {item.get('name')}"
                for version in ("2025-11-25", "2026-07-28"):
                    check(label, version, item_def, item)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
