"""The console: pages a person opens in a browser at ``/console``.

A small page and its script (``console/``, packaged with the API) that call the
same ``/v1`` routes as any client, with the token the person logs in with: there
is no other way into the brain from here.  Everything the page loads is served
by the API itself, so it works offline, and a content security policy forbids
anything from another origin.  The pages pass the API's Host and Origin checks
(:mod:`reverie.api.site`) like every request.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

ASSETS = Path(__file__).with_name("console")

# Nothing from another origin, no inline script, no framing by another site.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def mount(app: FastAPI) -> None:
    """Serve the console at ``/console`` and its assets under ``/console/assets``."""

    @app.get("/console", include_in_schema=False)
    def console() -> FileResponse:
        return FileResponse(ASSETS / "index.html", media_type="text/html", headers=HEADERS)

    @app.get("/console/", include_in_schema=False)
    def console_slash() -> RedirectResponse:
        return RedirectResponse("/console", status_code=308)

    app.mount("/console/assets", StaticFiles(directory=ASSETS), name="console-assets")
