"""The Memory Console: one web page and one set of JSON endpoints, served by the LangBot
plugin's Page component and by `memvault console` (see API.md)."""
