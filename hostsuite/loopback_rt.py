"""`lbp rt` with its WebSocket servers on 127.0.0.1 only.

The SDK's runtime binds its control and debug servers to 0.0.0.0 with no option to change
it; the real-host suite must stay on loopback, so this wrapper pins the host before the
runtime starts. Run with the HOST venv's python (the runtime LangBot 4.11.2 pins):

    <host venv>/bin/python hostsuite/loopback_rt.py --ws-control-port N --ws-debug-port M
"""

from __future__ import annotations

import sys

from langbot_plugin.runtime.io.controllers.ws import server

_original_init = server.WebSocketServerController.__init__


def _loopback_init(self, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
    kwargs["host"] = "127.0.0.1"
    _original_init(self, port, *args, **kwargs)


server.WebSocketServerController.__init__ = _loopback_init  # type: ignore[method-assign]

if __name__ == "__main__":
    from langbot_plugin.cli import main

    sys.argv = ["lbp", "rt", *sys.argv[1:]]
    sys.exit(main())
