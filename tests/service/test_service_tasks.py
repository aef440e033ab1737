"""The service runs the task turn (SPEC 8 through SPEC 11): a real `mgi serve` on loopback with
the reference task scenario, sent through `/dm/v1/session/json`.

- a profile is checked at the start: a valid one is the session's (`{profile.email}` is the
  sender's default), an undeclared field or an invalid value is 422 `invalid_profile` with the
  engine's one line naming the field, and nothing is stored;
- a turn's JSON line carries `passed` (SPEC 8.3) and, with `"trace": true`, the trace does too.
"""

from __future__ import annotations

import pytest

from conftest import ROOT
from support.service_server import ServiceServer

SCENARIO = (ROOT / "scenarios" / "email_compose.json").read_text(encoding="utf-8")
PROFILE = {"email": "user@gmail.com", "name": "김마고"}


def start(service: ServiceServer, **body) -> tuple[int, dict]:
    status, answer, _ = service.call("POST", "/dm/v1/session/json",
                                     {"scenario_text": SCENARIO, **body})
    return status, answer


@pytest.mark.parametrize("profile, field", [({"emial": "a@b.co"}, "emial"),
                                            ({"email": "not an address"}, "email")])
def test_a_bad_profile_is_refused_with_the_field_named(service, profile, field):
    status, answer = start(service, session_id=f"bad-{field}", profile=profile)
    assert status == 422 and answer["error"]["code"] == "invalid_profile"
    assert repr(field) in answer["error"]["message"] and "\n" not in answer["error"]["message"]
    assert service.call("GET", f"/dm/v1/session/bad-{field}")[0] == 404


def test_a_profile_is_the_sessions_and_a_turn_reports_the_nodes_it_passed(service):
    status, answer = start(service, session_id="mail-1", profile=PROFILE)
    assert status == 201, answer
    turns = ["메일 보낼래요", "happybell@gmail.com", "행사에 와주셔서 감사하다는 내용이야",
             "공손하게요", "내 이메일로 해"]
    for text in turns:
        status, answer, _ = service.call("POST", "/dm/v1/message",
                                         {"session_id": "mail-1", "text": text})
        assert status == 200, answer
    assert answer["turn"]["slots"]["sender"] == "user@gmail.com"  # {profile.email}
    status, answer, _ = service.call("POST", "/dm/v1/message",
                                     {"session_id": "mail-1", "text": "네", "trace": True})
    assert status == 200, answer
    passed = [p["node"] for p in answer["turn"]["passed"]]
    assert passed and answer["turn"]["next_node"] == "confirming"
    assert [p["node"] for p in answer["trace"]["passed"]] == passed
