"""Real SMTP servers on loopback for the e-mail skill's tests (`aiosmtpd`, a dev dependency).

    with SmtpServer() as server:            # accepts everything, records what it received
        ... MAGO_SMTP_URL=server.url ...
        server.messages[0]                  # the parsed `EmailMessage`; `envelopes` too
    SmtpServer(refuse="550 5.1.1 no such user")   # refuses every recipient with that reply
    SmtpServer(users={"mago": "pw"})        # AUTH PLAIN/LOGIN over plain TCP, those users only
    with silent_port() as port: ...         # accepts TCP connections and never says a word
    closed_port()                           # a loopback port where nothing listens

Each server runs in a thread of its own (aiosmtpd's `Controller`) on a free port and is
stopped when the `with` block ends.
"""

from __future__ import annotations

import email
import email.policy
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from support.redis_server import free_port


class Envelope(NamedTuple):
    mail_from: str
    rcpt_tos: list[str]
    content: bytes


class Recorder:
    """An aiosmtpd handler: records every message; refuses recipients with `refuse` if set."""

    def __init__(self, refuse: str | None = None):
        self.refuse = refuse
        self.envelopes: list[Envelope] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return self.refuse
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(Envelope(envelope.mail_from, list(envelope.rcpt_tos),
                                       envelope.content))
        return "250 Message accepted for delivery"


class SmtpServer:
    """An aiosmtpd server on 127.0.0.1 and a free port; see the module docstring."""

    def __init__(self, refuse: str | None = None, users: dict[str, str] | None = None):
        self.handler = Recorder(refuse)
        self.port = free_port()
        options = {}
        if users is not None:
            options = {"authenticator": _authenticator(users), "auth_require_tls": False}
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port,
                                     **options)

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def envelopes(self) -> list[Envelope]:
        return self.handler.envelopes

    @property
    def messages(self) -> list[email.message.EmailMessage]:
        return [email.message_from_bytes(e.content, policy=email.policy.default)
                for e in self.envelopes]


def _authenticator(users: dict[str, str]):
    def check(server, session, envelope, mechanism, auth_data) -> AuthResult:
        login = auth_data.login.decode("utf-8", "replace")
        password = auth_data.password.decode("utf-8", "replace")
        ok = users.get(login) == password
        return AuthResult(success=ok, handled=False)  # aiosmtpd sends 235 or 535
    return check


@contextmanager
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def closed_port() -> int:
    """A loopback port with no listener: connecting to it is refused."""
    return free_port()
