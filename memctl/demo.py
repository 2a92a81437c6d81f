"""`memctl demo`: a short offline tour of the memory tools on a throwaway brain."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import memory_core as mc
from memctl import output as out
from memory_core.runtime import Runtime

MEMORIES = [
    ("User prefers dark mode in every editor.", "semantic", ["preference", "ui"]),
    ("User's favourite colour is teal.", "semantic", ["preference"]),
    ("User likes dark themes for the terminal too.", "semantic", ["preference", "ui"]),
    ("Deploy the billing service on Friday after the freeze lifts.", "prospective", ["deploy"]),
    ("Yesterday the user debugged a flaky Redis connection with me.", "episodic", ["redis"]),
    ("To rotate the API key: revoke the old one, then restart the workers.", "procedural", []),
]


def run_demo(settings: mc.Settings, *, as_json: bool) -> None:
    steps: list[dict[str, Any]] = []

    def say(step: str, **data: Any) -> None:
        steps.append({"step": step, **data})
        if not as_json:
            out.console.print(f"[bold cyan]{step}[/bold cyan]")
            for k, v in data.items():
                out.console.print(f"  {k}: {v}")

    with tempfile.TemporaryDirectory(prefix="reverie-demo-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'brain.sqlite'}"
        settings = settings.model_copy(update={"data_dir": Path(tmp) / "data"})
        runtime = Runtime.open(settings.model_copy(update={"brain_url": url}))
        brain = runtime.brain
        from memory_core.consolidation.dream import reflect

        ctx = mc.ToolContext(  # no queue here: the pass runs in this process
            brain,
            mc.OPEN,
            scope_ids={"user": "demo-user"},
            reflect=lambda: reflect(brain, settings, None),
        )
        say("a throwaway brain", path=str(brain.path))

        ids = []
        for content, type_, tags in MEMORIES:
            r = mc.call_tool("memory_add", {"content": content, "type": type_, "tags": tags}, ctx)
            ids.append(r["traceId"])
        say("memory_add x6", added=len(ids))

        for query in ("what's the user's favourite colour?", '"dark mode" OR dark*', "redis"):
            r = mc.call_tool("memory_search", {"query": query, "limit": 3}, ctx)
            say(f"memory_search {query!r}", results=[h["content"] for h in r["results"]])

        r = mc.call_tool("memory_add", {"content": "x", "type": "feeling"}, ctx)
        say("memory_add with a bad type is refused", result=r["error"]["message"])

        r = mc.call_tool("memory_merge", {"traceIds": [ids[0], ids[2]]}, ctx)
        survivor = mc.get_trace(brain, r["survivorId"], identity=mc.OPEN)
        say(
            "memory_merge the two dark-mode memories",
            survivor=survivor.content,
            tags=survivor.tags,
            deleted=r["deletedIds"],
        )

        r = mc.call_tool(
            "memory_update",
            {"traceId": ids[1], "content": "User's favourite colour is now deep orange."},
            ctx,
        )
        say("memory_update the colour", **r)

        r = mc.call_tool("memory_delete", {"traceId": ids[3]}, ctx)
        after = mc.call_tool("memory_search", {"query": "billing"}, ctx)
        say(
            "memory_delete the deploy reminder",
            deleted=r["deleted"],
            search_billing_after=len(after["results"]),
        )

        r = mc.call_tool("memory_reflect", {}, ctx)
        say("memory_reflect", result=r)
        runtime.close()
    if as_json:
        out.emit_json({"steps": steps})
