"""The official Python SDK client (`mcp`) completes its own OAuth flow
against examples/protected and the authorization server of as.mjs: the 401
leads it to the Protected Resource Metadata, the authorization server's
metadata and a client-credentials token for the resource; a tool needing a
scope the token lacks answers 403 insufficient_scope and the SDK steps up.

    python py_client.py URL ISSUER

Prints one line per check and `N passed, M failed`; exits 1 on a failure.
"""

from __future__ import annotations

import json
import re
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

RESULTS = {"passed": 0, "failed": 0}


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS["passed" if ok else "failed"] += 1
    suffix = f" ({detail})" if detail else ""
    print(f"{'PASS' if ok else 'FAIL'} py oauth: {name}{suffix}", flush=True)


class Memory:
    """Tokens and client information kept in memory (the SDK's TokenStorage)."""

    def __init__(self) -> None:
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info) -> None:
        self.client_info = client_info


def text(result) -> str:
    return result.content[0].text if result.content else ""


async def main(url: str, issuer: str) -> None:
    statuses: list[str] = []

    async def log(response: httpx2.Response) -> None:
        challenge = response.headers.get("www-authenticate", "")
        statuses.append(f"{response.request.method} {response.request.url} {response.status_code} {challenge}".strip())

    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=Memory(),
        client_id="mcp-interop",
        client_secret="mcp-interop-secret",
        scope="notes:read",
        issuer=issuer,
    )
    async with httpx2.AsyncClient(auth=provider, event_hooks={"response": [log]}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                check(
                    "connect after the 401 and a token",
                    any(" 401 Bearer " in s and 'resource_metadata="' in s for s in statuses),
                    "; ".join(statuses),
                )
                me = json.loads(text(await session.call_tool("whoami", {})) or "{}")
                check("whoami names the client", me.get("principal") in ("sub:mcp-interop", "client:mcp-interop"), json.dumps(me))
                check("the token carries notes:read", "notes:read" in me.get("scopes", []))
                names = sorted(t.name for t in (await session.list_tools()).tools)
                check("listing shows only what the token may use", names == ["read_notes", "whoami"], ",".join(names))
                before = len(statuses)
                added = await session.call_tool("add_note", {"text": "from the Python SDK"})
                step_up = statuses[before:]
                check(
                    "add_note: 403 insufficient_scope naming notes:write first",
                    any(
                        " 403 Bearer " in s and 'error="insufficient_scope"' in s and re.search(r'scope="[^"]*notes:write', s)
                        for s in step_up
                    ),
                    "; ".join(step_up),
                )
                check("the step-up got a new token", any(re.search(r"/token 200$", s) for s in step_up), "; ".join(step_up))
                check("add_note after the step-up", not getattr(added, "is_error", getattr(added, "isError", False)) and "notes" in text(added), text(added))
                me = json.loads(text(await session.call_tool("whoami", {})) or "{}")
                scopes = me.get("scopes", [])
                check("the new token keeps notes:read and adds notes:write", {"notes:read", "notes:write"} <= set(scopes), json.dumps(scopes))
                notes = text(await session.call_tool("read_notes", {}))
                check("read_notes after the step-up", "from the Python SDK" in notes, notes)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python py_client.py URL ISSUER", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, sys.argv[1], sys.argv[2])
    except Exception as e:  # the flow broke: one failed check, with why
        check("flow completed", False, repr(e))
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(0 if RESULTS["failed"] == 0 else 1)
