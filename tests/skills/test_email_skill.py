"""The built-in `email` skill (SPEC 8.4): over a real SMTP server on loopback (aiosmtpd) and
into a real outbox folder; run as the engine runs it, through the registry and `run_skill`."""

from __future__ import annotations

import email
import email.policy
import email.utils
import hashlib
import re
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interpreter.skills import EmailSkill, SkillContext, SkillRegistry, run_skill
from interpreter.skills.email import LINE_BREAKS, NO_TRANSPORT, message_id, outbox_name

from conftest import examples
from support.smtp_server import SmtpServer, closed_port, silent_port

ACTION = "sess-7f3a:4:send_mail"
CONTEXT = SkillContext("sess-7f3a", "send_mail", "ko", {}, action_id=ACTION)
ARGS = {"to": "minji@example.com", "from": "me@example.org", "subject": "주간 회의 안내",
        "body": "안녕하세요, 민지 님.\n내일 오전 10시 회의에 와 주세요.", "signature": "김철수 드림"}
SENT_BODY = "안녕하세요, 민지 님.\n내일 오전 10시 회의에 와 주세요.\n\n김철수 드림\n"
REGISTRY = SkillRegistry.default(discover=False)


@pytest.fixture
def mail_env(monkeypatch):
    """Neither transport set; each test sets the one it wants."""
    monkeypatch.delenv("MAGO_SMTP_URL", raising=False)
    monkeypatch.delenv("MAGO_OUTBOX", raising=False)
    return monkeypatch


def send(args=None, context=CONTEXT, timeout_ms=3000):
    """The skill run as the engine runs it: from the default registry, through `run_skill`."""
    return run_skill(REGISTRY.get("email"), dict(ARGS if args is None else args), context,
                     timeout_ms)


def parsed(data: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(data, policy=email.policy.default)


def text_of(message) -> str:
    return message.get_content().replace("\r\n", "\n")


def assert_headers_match(message, args=ARGS, action=ACTION):
    assert message["To"] == args["to"] and message["From"] == args["from"]
    assert message["Subject"] == args["subject"]
    assert message["Message-ID"] == message_id(action)
    assert email.utils.parsedate_to_datetime(message["Date"]) is not None
    assert "X-Mago-Action-Id" not in message and action not in message.as_string()


def one_line_error(result, status="failed") -> str:
    assert result.status == status, result
    error = result.data["error"]
    assert error and "\n" not in error and "\r" not in error
    return error


# --- naming ---------------------------------------------------------------------------------


def test_the_message_id_and_the_file_name_derive_from_the_action_id():
    digest = hashlib.sha256(ACTION.encode()).hexdigest()
    assert message_id(ACTION) == f"<{digest[:32]}@mago>"
    assert outbox_name(ACTION) == f"sess-7f3a_4_send_mail-{digest[:16]}.eml"
    assert outbox_name("a:1:b") != outbox_name("a_1_b")  # the digest keeps them apart
    assert re.fullmatch(r"[A-Za-z0-9._-]+", outbox_name("../../etc/passwd:1:x\n"))
    assert not outbox_name("..:1:.").startswith(".")


def test_the_default_registry_has_the_email_skill():
    assert "email" in REGISTRY.names() and isinstance(REGISTRY.get("email"), EmailSkill)


# --- SMTP -----------------------------------------------------------------------------------


def test_smtp_sends_one_message_whose_headers_and_korean_body_match_the_args(mail_env):
    with SmtpServer() as server:
        mail_env.setenv("MAGO_SMTP_URL", server.url)
        result = send()
    assert result.status == "ok" and result.data == {"message_id": message_id(ACTION)}
    [envelope] = server.envelopes
    assert envelope.mail_from == ARGS["from"] and envelope.rcpt_tos == [ARGS["to"]]
    assert max(envelope.content) < 128  # 7-bit clean: any server takes it
    [message] = server.messages
    assert_headers_match(message)
    assert text_of(message) == SENT_BODY


def test_smtp_resend_of_one_action_carries_one_message_id(mail_env):
    with SmtpServer() as server:
        mail_env.setenv("MAGO_SMTP_URL", server.url)
        first, second = send(), send()
    assert first == second and first.status == "ok"
    assert [m["Message-ID"] for m in server.messages] == [message_id(ACTION)] * 2


def test_smtp_without_an_action_id_sends_with_a_fresh_message_id_each_time(mail_env):
    context = SkillContext("s", "n", "ko", {})
    with SmtpServer() as server:
        mail_env.setenv("MAGO_SMTP_URL", server.url)
        ids = {send(context=context).data["message_id"] for _ in range(2)}
    assert len(ids) == 2 and all(re.fullmatch(r"<[0-9a-f]{32}@mago>", i) for i in ids)


def test_smtp_login_with_the_user_and_password_of_the_url(mail_env):
    with SmtpServer(users={"mago": "s3cret-pw"}) as server:
        mail_env.setenv("MAGO_SMTP_URL", f"smtp://mago:s3cret-pw@127.0.0.1:{server.port}")
        assert send().status == "ok"
    assert len(server.envelopes) == 1


def test_a_refused_recipient_is_failed_with_the_servers_reply_on_one_line(mail_env):
    with SmtpServer(refuse="550 5.1.1 no such user here") as server:
        mail_env.setenv("MAGO_SMTP_URL", server.url)
        error = one_line_error(send())
    assert error == "recipient refused: 550 5.1.1 no such user here"
    assert server.envelopes == []


def test_a_server_that_never_answers_is_timeout(mail_env):
    with silent_port() as port:
        mail_env.setenv("MAGO_SMTP_URL", f"smtp://127.0.0.1:{port}")
        result = send({**ARGS, "timeout_ms": 300}, timeout_ms=3000)
    error = one_line_error(result, "timeout")
    assert error == f"SMTP server 127.0.0.1:{port} did not answer in time"


def test_a_refused_connection_is_failed(mail_env):
    port = closed_port()
    mail_env.setenv("MAGO_SMTP_URL", f"smtp://127.0.0.1:{port}")
    assert one_line_error(send()) == f"connection refused by 127.0.0.1:{port}"


def test_smtps_to_a_plain_server_is_failed(mail_env):
    with SmtpServer() as server:
        mail_env.setenv("MAGO_SMTP_URL", f"smtps://127.0.0.1:{server.port}")
        error = one_line_error(send())
    assert error.startswith(f"cannot reach 127.0.0.1:{server.port}") and not server.envelopes


@pytest.mark.parametrize("users", [{"mago": "other"}, None], ids=["wrong password", "no AUTH"])
def test_the_password_of_the_url_is_never_in_the_error(mail_env, users):
    with SmtpServer(users=users) as server:
        mail_env.setenv("MAGO_SMTP_URL", f"smtp://mago:Sup3rS3cret@127.0.0.1:{server.port}")
        error = one_line_error(send())
    assert "Sup3rS3cret" not in error and not server.envelopes


@pytest.mark.parametrize("url", [
    "http://mago:Sup3rS3cret@127.0.0.1:25", "smtp://mago:Sup3rS3cret@127.0.0.1:port",
    "smtp://mago:Sup3rS3cret@127.0.0.1:99999", "smtp://mago:Sup3rS3cret@127.0.0.1:25/inbox",
    "smtp://mago:Sup3rS3cret@127.0.0.1:25?tls=1", "smtp://mago:Sup3rS3cret@:25",
    "smtp://mago@127.0.0.1:25", "smtp://mago:S%C3%BCp3rS3cret@127.0.0.1:25",
    "smtp://[::1:25", "smtp://bad host:25"])
def test_a_bad_smtp_url_is_failed_without_quoting_it(mail_env, url):
    mail_env.setenv("MAGO_SMTP_URL", url)
    error = one_line_error(send())
    assert error.startswith("MAGO_SMTP_URL ") and "3cret" not in error and "127.0.0.1" not in error


# --- the outbox -----------------------------------------------------------------------------


def test_the_outbox_gets_one_eml_file_whose_headers_match_the_args(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    result = send()
    assert result.status == "ok" and result.data == {"message_id": message_id(ACTION)}
    assert [p.name for p in tmp_path.iterdir()] == [outbox_name(ACTION)]
    message = parsed((tmp_path / outbox_name(ACTION)).read_bytes())
    assert_headers_match(message)
    assert text_of(message) == SENT_BODY


def test_the_same_action_twice_leaves_one_unchanged_file(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    first = send()
    path = tmp_path / outbox_name(ACTION)
    written, stamp = path.read_bytes(), path.stat().st_mtime_ns
    second = send({**ARGS, "body": "다른 본문입니다. 두 번째 시도."})
    assert second == first
    assert list(tmp_path.iterdir()) == [path]
    assert path.read_bytes() == written and path.stat().st_mtime_ns == stamp


def test_concurrent_runs_of_one_action_write_one_file(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    results, start = [], threading.Barrier(8)

    def run():
        start.wait()
        results.append(send())

    workers = [threading.Thread(target=run) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert {r.status for r in results} == {"ok"} and len(results) == 8
    assert [p.name for p in tmp_path.iterdir()] == [outbox_name(ACTION)]


def test_other_actions_get_other_files(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    send(context=SkillContext("sess-7f3a", "send_mail", "ko", {},
                              action_id="sess-7f3a:5:send_mail"))
    send(context=SkillContext("s", "n", "ko", {}))  # no action id: a name of its own
    send()
    assert len(list(tmp_path.glob("*.eml"))) == 3


def test_a_missing_outbox_folder_is_failed_and_leaves_nothing(mail_env, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for folder in (tmp_path / "missing", blocker, blocker / "below"):
        mail_env.setenv("MAGO_OUTBOX", str(folder))
        assert one_line_error(send()) == f"MAGO_OUTBOX is not a folder: {folder}"
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_a_failed_write_leaves_no_temporary_file(mail_env, tmp_path):
    (tmp_path / outbox_name(ACTION)).mkdir()  # the final name is taken, by no file
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    error = one_line_error(send())
    assert error.startswith(f"cannot write to the outbox {tmp_path}: ") and "is no file" in error
    assert [p.name for p in tmp_path.iterdir()] == [outbox_name(ACTION)]


def test_no_transport_is_failed(mail_env):
    assert one_line_error(send()) == NO_TRANSPORT


def test_smtp_comes_before_the_outbox(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    with SmtpServer() as server:
        mail_env.setenv("MAGO_SMTP_URL", server.url)
        assert send().status == "ok"
    assert len(server.envelopes) == 1 and list(tmp_path.iterdir()) == []


# --- arguments ------------------------------------------------------------------------------


ONE_LINE_SUBJECT = "subject must be one line of text (no CR or LF)"


@pytest.mark.parametrize("change, error", [
    ({"subject": "안녕\r\nBcc: victim@example.net"}, ONE_LINE_SUBJECT),
    ({"subject": "hello\nX-Evil: 1"}, ONE_LINE_SUBJECT),
    ({"subject": "line\u2028break"}, ONE_LINE_SUBJECT),
    ({"subject": None}, ONE_LINE_SUBJECT),
    ({"to": "minji@example.com\r\nBcc: victim@example.net"}, "to must be one e-mail address"),
    ({"to": "minji@example.com, other@example.com"}, "to must be one e-mail address"),
    ({"to": "Minji <minji@example.com>"}, "to must be one e-mail address"),
    ({"to": "minji@localhost"}, "to must be one e-mail address"),
    ({"to": ""}, "to must be one e-mail address"),
    ({"from": None}, "from must be one e-mail address"),
    ({"from": "나@example.org"}, "from must be one e-mail address"),
    ({"body": 42}, "body must be text"),
    ({"body": "\ud800"}, "body must be text"),
    ({"timeout_ms": "soon"}, "timeout_ms must be a positive whole number"),
])
def test_bad_arguments_are_refused_and_nothing_is_written_or_sent(mail_env, tmp_path, change,
                                                                  error):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    with SmtpServer() as server:
        if "timeout_ms" in change:
            mail_env.setenv("MAGO_SMTP_URL", server.url)
        assert one_line_error(send({**ARGS, **change})) == error
    assert list(tmp_path.iterdir()) == [] and server.envelopes == []


@pytest.mark.parametrize("signature", [None, False, True, "", "  ", 7])
def test_only_a_text_signature_is_appended(mail_env, tmp_path, signature):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    assert send({**ARGS, "signature": signature}).status == "ok"
    assert text_of(parsed((tmp_path / outbox_name(ACTION)).read_bytes())) == ARGS["body"] + "\n"


def test_addresses_are_trimmed_and_an_empty_subject_is_allowed(mail_env, tmp_path):
    mail_env.setenv("MAGO_OUTBOX", str(tmp_path))
    assert send({**ARGS, "to": "  minji@example.com ", "subject": ""}).status == "ok"
    message = parsed((tmp_path / outbox_name(ACTION)).read_bytes())
    assert message["To"] == "minji@example.com" and message["Subject"] == ""


# --- property -------------------------------------------------------------------------------

ONE_LINE = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")


def canonical(text: str) -> str:
    """What any MIME text body is up to line breaks: CRLF, CR or LF, and one ending newline."""
    return re.sub(r"\r\n?", "\n", text).removesuffix("\n")


@settings(max_examples=examples(100))
@given(subject=st.text(ONE_LINE, max_size=200) | st.text(" \t=?Qq_한글", max_size=60),
       body=st.text(max_size=1500), signature=st.none() | st.text(max_size=40))
def test_the_outbox_file_parses_back_to_the_subject_and_body(subject, body, signature):
    args = {**ARGS, "subject": subject, "body": body, "signature": signature}
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as env:
        env.delenv("MAGO_SMTP_URL", raising=False)
        env.setenv("MAGO_OUTBOX", folder)
        result = EmailSkill().run(args, CONTEXT)
        files = list(Path(folder).iterdir())
        if LINE_BREAKS.intersection(subject):
            assert result.status == "failed" and files == []
            return
        assert result.status == "ok" and [f.name for f in files] == [outbox_name(ACTION)]
        data = files[0].read_bytes()
    assert max(data, default=0) < 128 and all(len(line) <= 998 for line in data.split(b"\r\n"))
    message = parsed(data)
    assert message["Subject"] == subject
    sent = body.rstrip("\r\n") + "\n\n" + signature if signature and signature.strip() else body
    assert canonical(text_of(message)) == canonical(sent)
