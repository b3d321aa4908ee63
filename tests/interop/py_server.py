"""A server on the official Python SDK (`mcp`), for `examples/client_smoke`
in `.ci/run`: our client against software we did not write.

    python py_server.py --stdio
    python py_server.py --http PORT      (Streamable HTTP at http://127.0.0.1:PORT/mcp)

Tools `echo {text}`, `slow {steps, delayMs}` (progress, cancellable) and
`confirm` (elicitation); resource `demo://hello`; prompt `greet`.
"""

import asyncio
import sys

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

server = MCPServer("py-interop-server")


class Confirm(BaseModel):
    confirmed: bool


@server.tool()
async def echo(text: str) -> str:
    """Returns its text unchanged."""
    return text


@server.tool()
async def slow(ctx: Context, steps: int = 3, delayMs: int = 200) -> str:
    """Counts to `steps`, reporting progress."""
    for i in range(1, steps + 1):
        await asyncio.sleep(delayMs / 1000)
        await ctx.report_progress(i, steps)
    return f"counted to {steps}"


@server.tool()
async def confirm(ctx: Context) -> str | InputRequiredResult:
    """Asks the user to confirm."""
    if ctx.protocol_version == "2026-07-28":
        # Stateless: no server->client request; ask through input_required.
        answered = (ctx.input_responses or {}).get("confirm")
        if answered is None:
            return InputRequiredResult(input_requests={"confirm": ElicitRequest(
                params=ElicitRequestFormParams(message="Go ahead?",
                                               requested_schema=Confirm.model_json_schema()))})
        content = getattr(answered, "content", None) or {}
        return f"confirmed={content.get('confirmed')}"
    answer = await ctx.elicit("Go ahead?", Confirm)
    if answer.action != "accept":
        return f"not confirmed ({answer.action})"
    return f"confirmed={answer.data.confirmed}"


@server.resource("demo://hello")
def hello() -> str:
    """A greeting."""
    return "hello from the Python server"


@server.prompt()
def greet(name: str = "the world") -> str:
    """Greets someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
