#!/usr/bin/env python3
"""Validate every message our integration tests received against the official MCP JSON Schemas.

Reads the `*.jsonl` traces that TestClient writes when MCP_TRACE_DIR is set
(one line per received message: {"revision": R, "method": M, "message": ...};
see mcp-core/src/testing.rs) and checks each message against the schema of
its revision in SCHEMA_DIR (<revision>.json):

- the JSON-RPC envelope (result response, error response, notification or
  request, under the def names each schema file uses);
- a result against the answered method's result definition (InputRequiredResult
  for a 2026-07-28 `input_required` result), and against the method's
  `<Result>Response` definition where the schema has one;
- an error with a code the schema defines an error response for (-32020,
  -32021, -32022, -32042) against that definition;
- a notification or a server->client request against its method's definition.

Plus the rules the schemas cannot express:
- 2026-07-28: every result has `resultType` "complete" or "input_required";
  only tools/call, prompts/get and resources/read may answer `input_required`;
  an `input_required` result has `inputRequests` and/or `requestState`, no
  caching hints, and each input request has only `method` and `params`, with
  method elicitation/create, sampling/createMessage or roots/list; the server
  sends no requests; list_changed / resources/updated notifications carry the
  subscription id of their listen stream;
- earlier revisions: no result has `resultType`.

A message is skipped (counted and printed, not failed) when its revision has
no schema file or its method has no known definition in that revision. A
response to a request with an unknown `_meta` protocol version (revision with
no schema file, other than 2024-11-05) that is an error is checked against
the newest schema, since the server answers such claims under the newest rules.

Needs the `jsonschema` package (the interop harness's venv has it). Prints one
line per failure and per kind of skip, and ends with "N passed, M failed";
exits non-zero on any failure or when nothing was checked.

usage: validate_traces.py SCHEMA_DIR TRACE_DIR
"""
import collections
import glob
import json
import os
import sys

from jsonschema import Draft7Validator, Draft202012Validator

MODERN = "2026-07-28"
# Revisions with no schema file that a legacy session may negotiate.
LEGACY_WITHOUT_SCHEMA = {"2024-11-05"}

RESULT_DEFS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "server/discover": "DiscoverResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/result": "GetTaskPayloadResult",
}

NOTIFICATION_DEFS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
    "notifications/tasks/status": "TaskStatusNotification",
}

SERVER_REQUEST_DEFS = {
    "ping": "PingRequest",
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}

ERROR_DEFS = {
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
    -32042: "URLElicitationRequiredError",
}

MRTR_METHODS = {"tools/call", "prompts/get", "resources/read"}
INPUT_REQUEST_METHODS = {"elicitation/create", "sampling/createMessage", "roots/list"}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LISTEN_NOTIFICATIONS = {
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
}


class Schema:
    """One revision's schema file, with a validator per definition."""

    def __init__(self, path):
        with open(path) as f:
            full = json.load(f)
        if "$defs" in full:
            self.key, self.cls = "$defs", Draft202012Validator
        else:
            self.key, self.cls = "definitions", Draft7Validator
        self.defs = full[self.key]
        self.validators = {}

    def has(self, name):
        return name in self.defs

    def first(self, *names):
        return next((n for n in names if n in self.defs), None)

    def errors(self, name, instance):
        if name not in self.validators:
            schema = {"$ref": f"#/{self.key}/{name}", self.key: self.defs}
            if self.cls is Draft7Validator:
                schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            self.validators[name] = self.cls(schema)
        return sorted(self.validators[name].iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message))


def describe(error):
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    # anyOf/oneOf failures: name the closest sub-error, it is the useful one.
    if error.context:
        best = max(error.context, key=lambda e: len(list(e.absolute_path)))
        where = "/".join(str(p) for p in best.absolute_path) or "(root)"
        return f"{best.message} at {where}"
    return f"{error.message} at {where}"


def check(schemas, revision, method, message):
    """Returns (problems, skip_reason): a list of strings, and why it was not checked (or None)."""
    schema = schemas.get(revision)
    is_response = isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)
    if schema is None:
        if is_response and "error" in message and revision not in LEGACY_WITHOUT_SCHEMA:
            # An error to a claim of an unknown protocol version: answered under the newest rules.
            newest = max(schemas)
            return check(schemas, newest, method, message)
        return [], f"no schema for revision {revision}"
    if not isinstance(message, dict):
        return [f"not a JSON object: {json.dumps(message)[:200]}"], None

    problems = []

    def against(name, instance, label=None):
        for error in schema.errors(name, instance)[:3]:
            problems.append(f"{label or name}: {describe(error)}")

    if "method" in message and "id" in message:
        # A server->client request.
        against("JSONRPCRequest", message)
        if revision == MODERN:
            problems.append("a 2026-07-28 server sends no JSON-RPC requests (use input_required)")
        name = SERVER_REQUEST_DEFS.get(message.get("method"))
        if name is None or not schema.has(name):
            return problems, None if problems else f"no request definition for {message.get('method')}"
        against(name, message)
        return problems, None

    if "method" in message:
        against("JSONRPCNotification", message)
        m = message.get("method")
        if revision == MODERN and m in LISTEN_NOTIFICATIONS:
            meta = (message.get("params") or {}).get("_meta") or {}
            if SUBSCRIPTION_ID not in meta:
                problems.append(f"2026-07-28 {m} outside a listen stream (no _meta {SUBSCRIPTION_ID})")
        name = NOTIFICATION_DEFS.get(m)
        if name is None or not schema.has(name):
            return problems, None if problems else f"no notification definition for {m} in {revision}"
        against(name, message)
        return problems, None

    if "error" in message:
        # JSON-RPC 2.0 answers a message whose id could not be read with
        # "id": null; the MCP schemas omit the id instead (2025-11-25 on) or
        # cannot express it (2025-06-18). We keep JSON-RPC's null, as the
        # framework's contract says, so the envelope is checked without it.
        envelope = message
        if message.get("id", 0) is None and isinstance(message.get("error"), dict) \
                and message["error"].get("code") in (-32700, -32600):
            envelope = {k: v for k, v in message.items() if k != "id"}
            if revision not in ("2025-11-25", MODERN):
                envelope = None  # 2025-06-18 and older cannot express an unknown id
        if envelope is not None:
            against(schema.first("JSONRPCErrorResponse", "JSONRPCError"), envelope)
        if "result" in message:
            problems.append("response has both result and error")
        code = (message.get("error") or {}).get("code") if isinstance(message.get("error"), dict) else None
        name = ERROR_DEFS.get(code)
        if name and schema.has(name):
            against(name, message)
        return problems, None

    if "result" not in message:
        against("JSONRPCNotification" if "method" in message else schema.first("JSONRPCResultResponse", "JSONRPCResponse"), message)
        problems.append("neither result, error nor method")
        return problems, None

    against(schema.first("JSONRPCResultResponse", "JSONRPCResponse"), message)
    result = message["result"]
    if not isinstance(result, dict):
        return problems, None
    result_type = result.get("resultType")
    if revision == MODERN:
        if result_type not in ("complete", "input_required"):
            problems.append(f"resultType must be \"complete\" or \"input_required\", got {json.dumps(result_type)}")
        if result_type == "input_required":
            if method is not None and method not in MRTR_METHODS:
                problems.append(f"{method} must not answer input_required (only {', '.join(sorted(MRTR_METHODS))})")
            against("InputRequiredResult", result)
            if "inputRequests" not in result and "requestState" not in result:
                problems.append("input_required without inputRequests or requestState")
            for hint in ("ttlMs", "cacheScope"):
                if hint in result:
                    problems.append(f"input_required carries the caching hint {hint}")
            requests = result.get("inputRequests")
            if isinstance(requests, dict):
                for key, req in requests.items():
                    if not isinstance(req, dict):
                        problems.append(f"inputRequests/{key} is not an object")
                        continue
                    extra = sorted(set(req) - {"method", "params"})
                    if extra:
                        problems.append(f"inputRequests/{key} has members other than method/params: {extra}")
                    if req.get("method") not in INPUT_REQUEST_METHODS:
                        problems.append(f"inputRequests/{key} has method {json.dumps(req.get('method'))}")
            if method in MRTR_METHODS:
                envelope = RESULT_DEFS[method] + "Response"
                if schema.has(envelope):
                    against(envelope, message)
            return problems, None
    elif "resultType" in result:
        problems.append(f"a {revision} result has resultType ({json.dumps(result_type)}); it appeared in 2026-07-28")

    if method is None:
        return problems, None if problems else "result to a request of unknown method"
    name = RESULT_DEFS.get(method)
    if name is None or not schema.has(name):
        return problems, None if problems else f"no result definition for {method} in {revision}"
    against(name, result, f"result {name}")
    if schema.has(name + "Response"):
        against(name + "Response", message)
    return problems, None


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_dir, trace_dir = sys.argv[1], sys.argv[2]
    schemas = {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.json"))):
        schemas[os.path.basename(path)[: -len(".json")]] = Schema(path)
    if not schemas:
        print(f"no schemas in {schema_dir}", file=sys.stderr)
        return 2

    passed = failed = 0
    skipped = collections.Counter()
    by_revision = collections.Counter()
    files = sorted(glob.glob(os.path.join(trace_dir, "*.jsonl")))
    for path in files:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                where = f"{os.path.basename(path)}:{lineno}"
                try:
                    entry = json.loads(line)
                    revision, method, message = entry["revision"], entry["method"], entry["message"]
                except (ValueError, KeyError, TypeError) as e:
                    failed += 1
                    print(f"FAIL {where}: unreadable trace line ({e})")
                    continue
                problems, skip = check(schemas, revision, method, message)
                if problems:
                    failed += 1
                    shown = json.dumps(message)
                    if len(shown) > 400:
                        shown = shown[:400] + "…"
                    print(f"FAIL {where} [{revision} {method}] {'; '.join(problems)} -- {shown}")
                elif skip:
                    skipped[skip] += 1
                else:
                    passed += 1
                    by_revision[revision] += 1
    for reason, count in sorted(skipped.items()):
        print(f"SKIP {count} message(s): {reason}")
    print("checked per revision: " + ", ".join(f"{r} {n}" for r, n in sorted(by_revision.items())))
    print(f"{len(files)} trace file(s), {sum(skipped.values())} skipped")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
