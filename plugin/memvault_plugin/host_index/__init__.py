"""`index: host`: MemVault's vectors in the LangBot host's vector database, through the SDK.

rows (ids, file ids, what each row carries) <- calls (the SDK, from worker threads) <- vectors
(the SearchBackend) <- probe (the isolation proof at start) <- opener (what Engine.open calls)
<- start (the plugin start: collection, proof, or local with a health warning).
"""

__all__ = ["calls", "opener", "probe", "rows", "start", "vectors"]
