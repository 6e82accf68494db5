"""TCP_NODELAY on the server's connections (``sdlab_ui.server.sockets``)."""

from __future__ import annotations

import os
import socket
import tempfile

from sdlab_ui.server.sockets import ensure_nodelay


def _nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_an_accepted_connection_gets_nodelay_and_other_descriptors_are_left_open():
    # Bound the way Streamlit 1.67 binds its server: protocol number 0, which asyncio's
    # ``_set_nodelay`` skips, so the accepted connection keeps Nagle's algorithm on.
    listener = socket.socket(family=socket.AF_INET)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    client = socket.create_connection(listener.getsockname())
    served, _ = listener.accept()
    with listener, client, served, tempfile.TemporaryFile() as file:
        assert served.proto == 0, "the accepted socket should carry the listener's protocol 0"
        assert not _nodelay(served), "a fresh connection has Nagle's algorithm on"
        changed = ensure_nodelay()
        assert _nodelay(served), "ensure_nodelay left Nagle's algorithm on the connection"
        assert changed >= 1, f"ensure_nodelay reported {changed} sockets changed"
        assert ensure_nodelay() == 0, "a second call found sockets still without TCP_NODELAY"
        # The descriptors it looked at are still open and usable: it borrowed them.
        file.write(b"still open")
        file.seek(0)
        assert file.read() == b"still open", "a file descriptor was disturbed"
        client.sendall(b"ping")
        assert served.recv(4) == b"ping", "the connection no longer works"
        os.fstat(served.fileno())
