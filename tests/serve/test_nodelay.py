"""``serve --transport http`` answers without the 40 ms of Nagle and delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from evidence_tool.serve.run import _listen


def test_answers_are_not_held_back_by_nagle() -> None:
    """The listener ``serve`` binds must be TCP to asyncio, which then sets TCP_NODELAY on
    every connection; else each answer's second write waits for the client's delayed ACK
    (40 ms on Linux: every request, however cheap, took that long)."""
    listener = _listen("127.0.0.1", 0)
    port = listener.getsockname()[1]
    flags: list[int] = []

    async def main() -> None:
        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            flags.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(600):  # until the server saw it (bounded)
                if flags:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert len(flags) == 1
    assert flags[0] != 0
