"""Memory (RSS) of the plugin process and of standalone index processes (issue 23, item 5)."""
