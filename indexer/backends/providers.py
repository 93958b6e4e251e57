"""Which embedding provider a process uses, from settings a person can change.

Settings (environment, so the CLI, the demo and benchmarks agree):
  MEMVAULT_EMBEDDING       `local` (default: the embedded USE model) or `openai`
  MEMVAULT_EMBEDDING_URL   base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1
  MEMVAULT_EMBEDDING_MODEL model name sent to that API
  MEMVAULT_EMBEDDING_DIM   the model's vector dimension
  MEMVAULT_EMBEDDING_KEY   API key (optional)
The LangBot host's own embedding model is wired by the plugin, not here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from indexer.backends.embed_openai import OpenAICompatible
from indexer.backends.embeddings import Embedder, EmbeddingError, default_embedder


def embedder_from_settings(env: Mapping[str, str] | None = None) -> Embedder:
    env = os.environ if env is None else env
    kind = env.get("MEMVAULT_EMBEDDING", "local").strip().lower()
    if kind in ("", "local", "default", "use"):
        return default_embedder()
    if kind == "openai":
        missing = [
            name
            for name in (
                "MEMVAULT_EMBEDDING_URL",
                "MEMVAULT_EMBEDDING_MODEL",
                "MEMVAULT_EMBEDDING_DIM",
            )
            if not env.get(name)
        ]
        if missing:
            raise EmbeddingError(f"MEMVAULT_EMBEDDING=openai needs {', '.join(missing)} set")
        try:
            dim = int(env["MEMVAULT_EMBEDDING_DIM"])
        except ValueError as exc:
            raise EmbeddingError(
                "MEMVAULT_EMBEDDING_DIM must be a whole number, e.g. 1536"
            ) from exc
        return OpenAICompatible(
            env["MEMVAULT_EMBEDDING_URL"],
            env["MEMVAULT_EMBEDDING_MODEL"],
            dim,
            api_key=env.get("MEMVAULT_EMBEDDING_KEY", ""),
        )
    raise EmbeddingError(f"MEMVAULT_EMBEDDING must be local or openai (got {kind!r})")
