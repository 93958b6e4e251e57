"""Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM, Ollama, LM Studio, ...)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence

import numpy as np

from indexer.backends.embeddings import (
    EmbedderIdentity,
    EmbeddingError,
    checked_rows,
    in_batches,
)


class OpenAICompatible:
    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        *,
        api_key: str = "",
        batch: int = 64,
        timeout: float = 30.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.api_key = api_key
        self.batch = batch
        self.timeout = timeout
        self.identity = EmbedderIdentity(f"openai-compatible:{model}", base_url.rstrip("/"), dim)

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            raise EmbeddingError(
                f"{self.url} answered HTTP {exc.code} ({detail}): check the URL, model and key"
            ) from exc
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
            raise EmbeddingError(
                f"cannot reach {self.url} ({exc}): is the server running?"
            ) from exc
        try:
            rows = sorted(payload["data"], key=lambda item: item.get("index", 0))
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self.url} returned no `data[].embedding` list") from exc
        return checked_rows(vectors, len(texts), self.identity.dim, self.url)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return in_batches(self._post, texts, self.batch, self.identity.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return self._post([text or " "])[0]
