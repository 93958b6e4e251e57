"""A library (the KB's reference memory) whose folder is a symlink is skipped, not the turn:
the chat's own memory still reaches the prompt and the link's target is never read."""

from __future__ import annotations

import logging
import shutil

from tests.plugin.injection.test_injector import KB, injected, remember, turn
from vault.writes.new_episode import NewEpisode


async def test_a_linked_library_folder_is_skipped_and_the_chat_still_recalls(
    plugin, host, tmp_path, caplog
):
    from memvault_plugin import knowledge_store

    host.register_memory_kb(KB)
    vault, _ = plugin.memory.require()
    library = knowledge_store.library_scope(KB)
    vault.remember(NewEpisode(library, "The office wifi network is called Nebula"))
    remember(plugin, "The office wifi password rotates every Monday")
    folder = vault.layout.episodes_dir(library)
    outside = tmp_path / "outside-episodes"
    shutil.move(folder, outside)
    folder.symlink_to(outside, target_is_directory=True)

    with caplog.at_level(logging.WARNING):
        ctx = await turn(plugin, host, "does the office wifi password rotate every Monday?")
    recalled = injected(ctx)[1]
    assert "rotates every Monday" in recalled
    assert "Nebula" not in recalled
    assert "memvault=library_skipped" in caplog.text
