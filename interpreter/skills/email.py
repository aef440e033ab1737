"""The built-in `email` skill (SPEC 8.4): one RFC 5322 message, sent over SMTP or written
into an outbox folder, named after the run's action id so that a retried turn is recognised.

In: `skill_args` `to`, `from` (one plain address each, `local@domain.tld`, ASCII),
`subject` (one line of text), `body` (text), optional `signature` (text: appended to the body
after a blank line when it is not blank; anything else, `false` or null adds nothing) and
optional `timeout_ms` (the SMTP socket timeout, default `SMTP_TIMEOUT_SECONDS`, below the
node's default timeout). The transport is read from the environment at each run:
`MAGO_SMTP_URL` (`smtp://[USER:PASSWORD@]HOST[:PORT]` or `smtps://...`, TLS from the first
byte; no STARTTLS) first, else `MAGO_OUTBOX` (a folder), else the run is `failed`.
Out: `ok` with `data.message_id`; `failed` or `timeout` with `data.error`, one line that
never holds the SMTP password.
After: the Message-ID is `<H@mago>` with H the first 32 hex digits of the SHA-256 of the
action id, so every attempt of one action carries one Message-ID (short enough for one
header line); the outbox file is `SAFE-H16.eml` (SAFE the action id with runs of other
characters than `A-Za-z0-9._-` as `_`, at most 80 of them; H16 the digest's first 16
digits). Guarantees: the outbox is exactly once (the message is written to a hidden
temporary file, synced and hard-linked to its final name, so that name appears only
complete and an existing one is never written again: the second run answers `ok` with the
same Message-ID); SMTP is at least once (a crash between the server's acceptance and the
session's save sends again, with the same Message-ID, so the receiver can recognise the
resend). A run without an action id gets a random one: it still sends, but is not
recognised when repeated. No `X-Mago-Action-Id` header: the action id holds the session id,
which the recipient must not learn; the digest does not reveal it.
"""

from __future__ import annotations

import errno
import os
import re
from contextlib import contextmanager, suppress
from typing import Any, NamedTuple
from collections.abc import Iterator

from .registry import Skill, SkillContext, SkillResult

SMTP_URL_ENV, OUTBOX_ENV = "MAGO_SMTP_URL", "MAGO_OUTBOX"  # the transport, read at each run
SMTP_TIMEOUT_SECONDS = 4.0  # under the 5 s that a node without `timeout_ms` gets
MESSAGE_ID_DOMAIN = "mago"
NO_TRANSPORT = "no mail transport: set MAGO_SMTP_URL or MAGO_OUTBOX"
DEFAULT_PORTS = {"smtp": 25, "smtps": 465}
LINE_BREAKS = frozenset("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # what str.splitlines splits
# Patterns as text, compiled (and cached by `re`) at first use: the engine imports this module.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_ADDRESS = rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})+"
_PLAIN_SUBJECT = r"[!-~]+(?: [!-~]+)*"  # what header folding keeps to the letter
_UNSAFE = r"[^A-Za-z0-9._-]+"
_HOST = r"[A-Za-z0-9.:-]+"


class SmtpServer(NamedTuple):
    secure: bool
    host: str
    port: int
    user: str
    password: str

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


class EmailSkill(Skill):
    """`email`: build the message from the args, then send it or put it in the outbox."""

    name = "email"

    def run(self, args: dict[str, Any], context: SkillContext) -> SkillResult:
        fields = message_fields(args)
        if isinstance(fields, str):
            return _failed(fields)
        action = context.action_id or f"no-action-id-{os.urandom(16).hex()}"
        url, outbox = os.environ.get(SMTP_URL_ENV), os.environ.get(OUTBOX_ENV)
        if url:
            return send_smtp(url, fields, action, args.get("timeout_ms"))
        if outbox:
            return write_outbox(outbox, fields, action)
        return _failed(NO_TRANSPORT)


# --- the message ---------------------------------------------------------------------------


def message_fields(args: dict[str, Any]) -> dict[str, str] | str:
    """The checked header fields and body text of `args`, or a one-line reason to refuse."""
    to, sender = _address(args.get("to")), _address(args.get("from"))
    subject, body, signature = args.get("subject"), args.get("body"), args.get("signature")
    if to is None:
        return "to must be one e-mail address"
    if sender is None:
        return "from must be one e-mail address"
    if not _text(subject) or LINE_BREAKS.intersection(subject):
        return "subject must be one line of text (no CR or LF)"
    if not _text(body):
        return "body must be text"
    if _text(signature) and signature.strip():
        body = body.rstrip("\r\n") + "\n\n" + signature
    return {"to": to, "from": sender, "subject": subject, "body": body}


def _address(value: Any) -> str | None:
    text = value.strip(" \t") if isinstance(value, str) else ""
    return text if re.fullmatch(_ADDRESS, text) else None


def _text(value: Any) -> bool:
    """Whether `value` is a string UTF-8 can carry (no lone surrogates)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def message_id(action_id: str) -> str:
    """The Message-ID of every attempt of one action."""
    return f"<{_digest(action_id)[:32]}@{MESSAGE_ID_DOMAIN}>"


def outbox_name(action_id: str) -> str:
    """The outbox file name of an action: safe characters, the digest against collisions."""
    safe = re.sub(_UNSAFE, "_", action_id).strip("._-")[:80] or "mail"
    return f"{safe}-{_digest(action_id)[:16]}.eml"


def _digest(action_id: str) -> str:
    import hashlib  # 3 ms (OpenSSL): only when an action is named

    return hashlib.sha256(action_id.encode("utf-8")).hexdigest()


def build_message(fields: dict[str, str], action_id: str) -> Any:
    """An `EmailMessage` (CRLF lines, 7-bit clean: UTF-8 in encoded words and base64 or
    quoted-printable) whose subject and body parse back to the letter."""
    from email.header import Header  # 20 ms of imports: only when a message is built
    from email.message import EmailMessage
    from email.policy import SMTP
    from email.utils import formatdate

    message = EmailMessage(policy=SMTP.clone(cte_type="7bit"))
    message["From"], message["To"] = fields["from"], fields["to"]
    subject = fields["subject"]
    if re.fullmatch(_PLAIN_SUBJECT, subject) and "=?" not in subject:
        message["Subject"] = subject
    else:  # the folder would eat runs of white space and read `=?..?=` as encoded words
        message.set_raw("Subject", Header(subject, "utf-8", header_name="Subject")
                        .encode(linesep="\r\n"))
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = message_id(action_id)
    message.set_content(fields["body"])
    return message


# --- SMTP ----------------------------------------------------------------------------------


def send_smtp(url: str, fields: dict[str, str], action_id: str, timeout_ms: Any) -> SkillResult:
    """Send over the server of `url` (I/O): `ok`, `failed` (a refusal, a bad URL, an
    unreachable server) or `timeout` (the server did not answer in time)."""
    server = smtp_server(url)
    if isinstance(server, str):
        return _failed(server)
    seconds = _timeout_seconds(timeout_ms)
    if seconds is None:
        return _failed("timeout_ms must be a positive whole number")
    message = build_message(fields, action_id)
    try:
        _deliver(message, server, seconds)
    except (OSError, UnicodeError) as error:  # smtplib's errors are OSErrors
        return _smtp_failure(error, server)
    return SkillResult("ok", {"message_id": message_id(action_id)})


def smtp_server(url: str) -> SmtpServer | str:
    """The server a `MAGO_SMTP_URL` names, or a one-line reason that never quotes the URL."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "MAGO_SMTP_URL is not a valid URL (smtp://[USER:PASSWORD@]HOST[:PORT])"
    if parts.scheme not in DEFAULT_PORTS:
        return "MAGO_SMTP_URL must start with smtp:// or smtps://"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "MAGO_SMTP_URL takes no path, query or fragment"
    if not parts.hostname or not re.fullmatch(_HOST, parts.hostname):
        return "MAGO_SMTP_URL names no valid host"
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    if bool(user) != bool(password) or not (user + password).isascii():
        return "MAGO_SMTP_URL needs both a user and a password, in ASCII, or neither"
    return SmtpServer(parts.scheme == "smtps", parts.hostname,
                      port or DEFAULT_PORTS[parts.scheme], user, password)


def _timeout_seconds(value: Any) -> float | None:
    if value is None:
        return SMTP_TIMEOUT_SECONDS
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value / 1000.0


def _deliver(message: Any, server: SmtpServer, seconds: float) -> None:
    import smtplib  # 25 ms with ssl: only when mail is sent

    if server.secure:
        import ssl
        client = smtplib.SMTP_SSL(server.host, server.port, timeout=seconds,
                                  context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=seconds)
    try:
        if server.user:
            client.login(server.user, server.password)
        client.send_message(message)
        with suppress(OSError):  # the message is accepted: a lost QUIT changes nothing
            client.quit()
    finally:
        client.close()


def _smtp_failure(error: BaseException, server: SmtpServer) -> SkillResult:
    """`timeout` for a socket timeout (smtplib wraps one read in `SMTPServerDisconnected`),
    else `failed`, with the reason on one line and the password blacked out."""
    if isinstance(error, TimeoutError) or isinstance(error.__context__, TimeoutError):
        return SkillResult("timeout", {"error": f"SMTP server {server.where} did not answer "
                                                "in time"})
    return _failed(_smtp_reason(error, server), server.password)


def _smtp_reason(error: BaseException, server: SmtpServer) -> str:
    import smtplib

    if isinstance(error, smtplib.SMTPRecipientsRefused):
        code, text = next(iter(error.recipients.values()), (0, b""))
        return f"recipient refused: {code} {_decoded(text)}"
    if isinstance(error, smtplib.SMTPResponseException):
        return f"SMTP server refused: {error.smtp_code} {_decoded(error.smtp_error)}"
    if isinstance(error, ConnectionRefusedError):
        return f"connection refused by {server.where}"
    if isinstance(error, smtplib.SMTPException):
        return f"SMTP error with {server.where}: {error}"
    return f"cannot reach {server.where}: {getattr(error, 'strerror', None) or error}"


def _decoded(text: Any) -> str:
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)


# --- the outbox ----------------------------------------------------------------------------


def write_outbox(folder: str, fields: dict[str, str], action_id: str) -> SkillResult:
    """Put the message into `folder` as its action's `.eml` file, exactly once (I/O)."""
    final = os.path.join(folder, outbox_name(action_id))
    done = SkillResult("ok", {"message_id": message_id(action_id)})
    if os.path.isfile(final):
        return done
    if not os.path.isdir(folder):
        return _failed(f"MAGO_OUTBOX is not a folder: {folder}")
    data = bytes(build_message(fields, action_id))
    try:
        _publish(folder, final, data)
    except OSError as error:
        return _failed(f"cannot write to the outbox {folder}: {error.strerror or error}")
    return done


def _publish(folder: str, final: str, data: bytes) -> None:
    """Write `data` to a hidden temporary file in `folder`, sync it, and give it the name
    `final` unless that exists; the temporary file is gone afterwards, whatever happened."""
    temp = os.path.join(folder, f".{os.path.basename(final)}.{os.urandom(6).hex()}.tmp")
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        _link_once(temp, final)
        _sync_folder(folder)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


def _link_once(temp: str, final: str) -> None:
    """Give `temp` the name `final` unless a file has it (a run that won the race)."""
    try:
        os.link(temp, final)
    except FileExistsError:
        if not os.path.isfile(final):
            raise OSError(errno.EEXIST, f"{os.path.basename(final)} exists and is no file") from None
    except OSError as error:  # a file system without hard links: rename, unless taken
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if not os.path.lexists(final):
            os.replace(temp, final)


def _sync_folder(folder: str) -> None:
    with suppress(OSError):  # not every system can open a folder for syncing
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def _failed(reason: str, secret: str = "") -> SkillResult:
    """A `failed` result whose error is one line, with `secret` never in it."""
    line = " ".join(reason.split())
    if secret:
        line = line.replace(secret, "***")
    return SkillResult("failed", {"error": line[:300]})


@contextmanager
def mail_sandbox(outbox: str | None = None) -> Iterator[None]:
    """While it lasts, no mail reaches a server: `MAGO_SMTP_URL` is unset and `MAGO_OUTBOX` is
    `outbox` (None: no transport, the skill fails); the environment is as it was afterwards.
    For tools that run many conversations (`mgi test`, `mgi fuzz`)."""
    saved = {name: os.environ.get(name) for name in (SMTP_URL_ENV, OUTBOX_ENV)}
    os.environ.pop(SMTP_URL_ENV, None)
    use_outbox(outbox)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def use_outbox(folder: str | None) -> None:
    """The outbox from now on (None: no transport, the skill fails)."""
    if folder is None:
        os.environ.pop(OUTBOX_ENV, None)
    else:
        os.environ[OUTBOX_ENV] = folder
