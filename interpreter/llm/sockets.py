"""Sockets with one deadline for a whole exchange, for the LLM client.

http.client's timeouts are per read: a server that drips its answer one byte at a time never
trips them. `connected_socket` connects to every address of a host within the time left, and
`DeadlineSocket` sets the socket's timeout to what is left before every send and read, so
connecting, sending, the status line, headers and body all share one deadline (a
`TimeoutError` once it has passed).
"""

from __future__ import annotations

import io
import math
import socket
import time
from typing import Any


def seconds_until(deadline: float) -> float:
    """Seconds from now to `deadline` (`time.monotonic()`); `TimeoutError` once it has passed
    (a socket timeout of 0 would mean non-blocking, not "no time left")."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


def connected_socket(host: str, port: int, until: float) -> socket.socket:
    """A TCP socket connected to the first of the host's addresses that answers, all tried
    before `until`; the last address's error when none does."""
    failure = OSError(0, f"no address for {host}")
    for family, kind, proto, _, address in socket.getaddrinfo(host, port,
                                                               type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(seconds_until(until))
            sock.connect(address)
            # http.client sends the headers and the body in two writes; without this, Nagle's
            # algorithm can hold the body until the server's delayed ACK (up to 40 ms).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except TimeoutError:
            sock.close()
            raise  # the time is spent: no other address can be tried
        except OSError as error:
            sock.close()
            failure = error
    raise failure


class DeadlineSocket:
    """A connected socket whose every send and receive ends by `deadline` (`time.monotonic()`).

    A socket's own timeout bounds each receive, so a server sending a byte every second
    would never time out; here each send and receive gets the time left until the deadline
    as its timeout, and `TimeoutError` once there is none. http.client uses `sendall`,
    `makefile` (for the response: a buffered reader whose every read is bounded so) and
    `close` (the file descriptor stays open until the reader is closed too, as for a socket).
    """

    __slots__ = ("sock", "deadline")

    def __init__(self, sock: socket.socket):
        self.sock, self.deadline = sock, math.inf

    def arm(self) -> None:
        """Give the next send or receive the time left until the deadline."""
        self.sock.settimeout(seconds_until(self.deadline))

    def sendall(self, data: bytes) -> None:
        self.arm()
        self.sock.sendall(data)  # the timeout bounds the whole of it (Python >= 3.5)

    def makefile(self, mode: str = "rb") -> io.BufferedReader:
        if mode != "rb":
            raise ValueError(f"a DeadlineSocket is only read, in binary, not {mode!r}")
        return io.BufferedReader(_DeadlineReader(self.sock.makefile("rb", buffering=0), self))

    def close(self) -> None:
        self.sock.close()


class _DeadlineReader(io.RawIOBase):
    """The socket's raw reader, armed with the time left before each receive."""

    def __init__(self, raw: io.RawIOBase, owner: DeadlineSocket):
        super().__init__()
        self.raw, self.owner = raw, owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self.owner.arm()
        return self.raw.readinto(buffer)

    def close(self) -> None:
        self.raw.close()
        super().close()
