"""MemVault's LangBot adapter: the modules main.py and the components import.

One package under a name no other distribution uses, imported as `memvault_plugin.<module>`:
the runtime puts the plugin folder on sys.path (for the duration of each component import on
SDK 0.7.18), so bare module names (`prompting`, `kb_cache`) could be shadowed by any
same-named module installed beside LangBot, and a lazy import run after the runtime took the
folder off sys.path would fail. Inside the package, modules import each other relatively.
"""
