"""The engine's optional LLM jobs: candidate extraction from a chat turn and consolidation
of old memories, with their prompts and the chat LLM client.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "candidates_extract",
    "candidates_prompt",
    "consolidate",
    "consolidate_preview",
    "consolidate_select",
    "consolidate_text",
    "llm",
]
