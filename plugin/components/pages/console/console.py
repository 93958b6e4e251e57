"""The Memory Console page inside LangBot: a thin adapter from the Page SDK's handle_api to
the console endpoints (console/api.py), the same ones `memvault console` serves.

The page's HTML, JS and i18n files are console/web/, copied next to this file when the
package is built (scripts/build_plugin.py) so there is one page for both hosts.
"""

from __future__ import annotations

import logging
from typing import Any

from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse
from memvault_plugin.vault_location import VaultLocation

from console.api import dispatch
from console.context import ConsoleContext, Notice
from console.errors import ApiError
from vault.format.redact_forms import redacted_name

log = logging.getLogger(__name__)


def location_notice(location: VaultLocation | None) -> Notice | None:
    """The Health card for where the vault is: only a runtime-installed plugin is judged
    (vault_location), so elsewhere there is no card."""
    if location is None or location.verdict is None:
        return None
    return Notice(
        level="WARN" if location.problem else "OK",
        text=location.text(),
        key=f"location_{location.verdict}",
        vars={
            "vault": str(location.vault),
            "plugins": str(location.plugins_dir),
            "recommended": str(location.recommended),
            "evidence": location.evidence,
        },
    )


class MemoryConsole(Page):
    async def handle_api(self, request: PageRequest) -> PageResponse:
        memory: Any = await self.plugin.settled()  # the settings LangBot holds now
        if memory is None or memory.vault is None:
            reasons = "; ".join(getattr(memory, "warnings", []) or ["it has not started"])
            return PageResponse.fail(
                f"memory is unavailable: {reasons}. Fix the plugin settings and restart it."
            )
        settings = memory.settings
        ctx = ConsoleContext(
            vault=memory.vault,
            engine=memory.engine,
            isolation=settings.isolation,
            host="langbot",
            git_autocommit=settings.git_autocommit,
            warnings=list(memory.warnings),
            location=location_notice(memory.location),
            floor=settings.relevance_floor,
            gate=settings.gate,
            turn=settings.turn(),  # the recall test injects as a real turn of this plugin
        )
        try:
            data = await memory.run(dispatch, ctx, request.endpoint, request.body)
        except ApiError as exc:
            log.info(
                "memvault=console_error endpoint=%s code=%s message=%r",
                redacted_name(str(request.endpoint)[:80]),
                exc.code,
                exc.message[:200],
            )
            return PageResponse.fail(exc.message)
        return PageResponse.ok(data)
