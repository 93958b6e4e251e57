"""Test-only plugin for the MemVault real-host suite (see hostsuite/README in the repo)."""

from langbot_plugin.api.definition.plugin import BasePlugin


class SuiteProbePlugin(BasePlugin):
    async def initialize(self) -> None:
        pass
