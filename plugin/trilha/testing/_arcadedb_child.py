"""Child process of :class:`trilha.testing.arcadedb.ArcadeDBBoltServer`.

Run as a script (not imported): it runs ArcadeDB with its Bolt plugin until stdin closes. It
imports nothing from trilha so the child starts fast and stays independent of the package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BOLT_PLUGIN = "Bolt:com.arcadedb.bolt.BoltProtocolPlugin"


def serve(config: dict[str, Any]) -> None:
    """Start ArcadeDB, create the database, write the ready file, serve until stdin closes."""
    from arcadedb_embedded.server import ArcadeDBServer

    server = ArcadeDBServer(
        config["root"],
        config["password"],
        config={
            "host": config["host"],
            "http_port": config["http_port"],
            "server_httpsIncomingPort": config["https_port"],
            "server_plugins": BOLT_PLUGIN,
            "bolt_port": config["bolt_port"],
        },
        jvm_kwargs={"heap_size": config["heap"]},
    )
    server.start()
    try:
        server.create_database(config["database"])
        Path(config["ready"]).write_text(json.dumps({"bolt_port": config["bolt_port"]}))
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
