"""The official Python SDK client (`mcp`) through its own authorization code
flow with PKCE (`OAuthClientProvider`) against examples/protected and the
authorization server of as.mjs. The SDK's redirect handler gets the
authorization URL; the scripted "browser" below follows it like a person
(oidc-provider's development login as `alice`, then consent) and the callback
handler hands the SDK the redirect's `code`, `state` and `iss`. Then tool
calls; then a tool needing a scope the token lacks answers 403
insufficient_scope and the SDK re-authorizes by itself with the union of the
scopes (step-up), and the call succeeds.

    python py_client_code.py URL

Prints one line per check and `N passed, M failed`; exits 1 on a failure.
"""

from __future__ import annotations

import json
import re
import sys
from html import unescape
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

from py_client import Memory, text

REDIRECT = "http://127.0.0.1:9/callback"
RESULTS = {"passed": 0, "failed": 0}


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS["passed" if ok else "failed"] += 1
    suffix = f" ({detail})" if detail else ""
    print(f"{'PASS' if ok else 'FAIL'} py oauth code: {name}{suffix}", flush=True)


async def browse(start: str) -> dict[str, str]:
    """Follows an authorization URL: signs in, consents, returns the redirect's query."""
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        response = await browser.get(start)
        for _ in range(20):
            if response.status_code in (302, 303):
                location = urljoin(str(response.request.url), response.headers["location"])
                if location.startswith(REDIRECT):
                    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
                    if "code" not in query:
                        raise RuntimeError(f"no code in the redirect: {location}")
                    return query
                response = await browser.get(location)
                continue
            page = response.text
            action = re.search(r'<form[^>]*action="([^"]+)"', page)
            if not action:
                raise RuntimeError(f"HTTP {response.status_code} without a form: {page[:400]}")
            form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"/?>', page))
            if 'name="login"' in page:
                form.update(login="alice", password="any")
            target = urljoin(str(response.request.url), unescape(action.group(1)))
            response = await browser.post(target, data=form)
        raise RuntimeError("too many hops")


async def main(url: str) -> None:
    asked: list[dict[str, str]] = []
    pending: list[dict[str, str]] = []
    statuses: list[str] = []

    async def redirect_handler(authorization_url: str) -> None:
        asked.append({k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()})
        pending.append(await browse(authorization_url))

    async def callback_handler() -> AuthorizationCodeResult:
        query = pending.pop()
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def log(response: httpx2.Response) -> None:
        if str(response.request.url).startswith(url):
            challenge = response.headers.get("www-authenticate", "")
            statuses.append(f"{response.status_code} {challenge}".strip())

    storage = Memory()
    # Pre-registered (as.mjs): the SDK reads it from storage and skips registration.
    storage.client_info = OAuthClientInformationFull(
        client_id="mcp-interop-code",
        redirect_uris=[REDIRECT],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code"],
        response_types=["code"],
    )
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="oauth-interop-py-code",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    def scopes(value: str | None) -> str:
        return " ".join(sorted((value or "").split()))

    async with httpx2.AsyncClient(auth=provider, event_hooks={"response": [log]}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                check(
                    "the first request is challenged (401 with resource_metadata)",
                    any(s.startswith("401 ") and 'resource_metadata="' in s for s in statuses),
                    " | ".join(statuses),
                )
                first = asked[0] if asked else {}
                check("one authorization before the session", len(asked) == 1, str(len(asked)))
                check("the authorization URL names the resource", first.get("resource") == url, json.dumps(first))
                check("the authorization URL uses PKCE S256", first.get("code_challenge_method") == "S256")
                check("the first authorization asks notes:read", scopes(first.get("scope")) == "notes:read")
                me = json.loads(text(await session.call_tool("whoami", {})) or "{}")
                check("whoami names the signed-in user", me.get("principal") == "sub:alice", json.dumps(me))
                check("the token carries notes:read only", scopes(" ".join(me.get("scopes", []))) == "notes:read")
                names = sorted(t.name for t in (await session.list_tools()).tools)
                check("listing shows only what the token may use", names == ["read_notes", "whoami"], ",".join(names))

                before = len(statuses)
                added = await session.call_tool("add_note", {"text": "from the Python code flow"})
                step_up = statuses[before:]
                check(
                    "add_note: 403 insufficient_scope naming notes:write first",
                    any(
                        s.startswith("403 ") and 'error="insufficient_scope"' in s and re.search(r'scope="[^"]*notes:write', s)
                        for s in step_up
                    ),
                    " | ".join(step_up),
                )
                check("the SDK re-authorized once", len(asked) == 2, str(len(asked)))
                check(
                    "the step-up asks the union notes:read notes:write",
                    len(asked) == 2 and scopes(asked[1].get("scope")) == "notes:read notes:write",
                    json.dumps(asked[-1] if asked else {}),
                )
                added_text = text(added)
                check(
                    "add_note after the step-up",
                    not getattr(added, "is_error", getattr(added, "isError", False)) and re.fullmatch(r"\d+ notes", added_text) is not None,
                    added_text,
                )
                me = json.loads(text(await session.call_tool("whoami", {})) or "{}")
                check(
                    "the new token carries both scopes",
                    scopes(" ".join(me.get("scopes", []))) == "notes:read notes:write",
                    json.dumps(me.get("scopes")),
                )
                notes = text(await session.call_tool("read_notes", {}))
                check("read_notes shows the note", "from the Python code flow" in notes, notes)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python py_client_code.py URL", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, sys.argv[1])
    except Exception as e:  # the flow broke: one failed check, with why
        check("flow completed", False, repr(e))
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(0 if RESULTS["failed"] == 0 else 1)
