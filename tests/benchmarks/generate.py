"""Generated scenarios of any size, for benchmarks: a chain of check nodes with slots,
conditional branches, stays, a closing node with resume transitions, and global rules.

`generate(n)` returns the scenario as a dict; every node is reachable and can finish, so the
compiler does the whole job (resolve, type-check, analyse, emit) on it.
"""

from __future__ import annotations

SLOTS = 50


def generate(n_nodes: int) -> dict:
    slots = {f"s{i}": _slot(i) for i in range(SLOTS)}
    nodes = [_node(i, n_nodes) for i in range(n_nodes - 1)]
    nodes.append({
        "id": "closing", "name": "마무리", "description": "대화를 마무리합니다.", "terminal": True,
        "responses": {"default": "오늘 이야기 나눠주셔서 감사해요.", "complete": "안녕히 계세요."},
        "params": {"max_turns": 2, "max_fallback_retries": 0},
        "next_nodes": [{"target": "n0", "condition": "system.conversation_resuming and slots.s0 is empty"},
                       {"target": f"n{max(0, n_nodes - 2)}", "condition": "system.conversation_resuming"}],
    })
    return {
        "metadata": {"name": f"generated_{n_nodes}", "language": "ko", "version": "1.0.0"},
        "intents": {"user_wants_to_end": {"description": "종료", "examples": ["그만", "대화 종료"]},
                    "ask_help": {"description": "도움", "examples": ["도와줘"]}},
        "slots": slots,
        "graph": {
            "entry": "n0", "bot_first": True,
            "global_transitions": [
                {"name": "end", "target": "closing", "condition": "nlu.intent == \"user_wants_to_end\""},
                {"name": "silent_close", "target": "closing",
                 "condition": {"and": [{"field": "nlu.dialogue_act", "operator": "equals", "value": "silence"},
                                       {"field": "system.no_input_count", "operator": "greater_than", "value": 2}]}},
                {"name": "help", "target": "n0", "condition": "nlu.intent == \"ask_help\""},
            ],
            "nodes": nodes,
        },
    }


def _slot(i: int) -> dict:
    if i % 3 == 0:
        return {"policy": "optional", "value_type": "enum", "values": ["yes", "no", "maybe"],
                "synonyms": {"yes": ["네", "응"], "no": ["아니"]}, "question": f"질문 {i}?"}
    if i % 3 == 1:
        return {"policy": "required", "value_type": "integer", "min": 0, "max": 10, "question": f"숫자 {i}?"}
    return {"policy": "optional", "value_type": "string", "max_length": 200}


def _node(i: int, n_nodes: int) -> dict:
    nxt = f"n{i + 1}" if i + 1 < n_nodes - 1 else "closing"
    skip = f"n{i + 2}" if i + 2 < n_nodes - 1 else "closing"
    slot = f"s{i % SLOTS}"
    node = {
        "id": f"n{i}", "name": f"단계 {i}", "description": f"{i}번째 확인 단계입니다.",
        "responses": {"default": f"{i}번째 질문이에요. {{slots.s{(i + 2) % SLOTS}}} 맞나요?"},
        "collect_slots": [slot],
        "next_nodes": [
            {"action": "stay", "condition": "system.node_turns == 1 and nlu.dialogue_act != \"affirm\""},
            {"target": skip, "condition": {"field": f"slots.s{(i % 17) * 3}", "operator": "in",
                                           "value": ["no", "maybe"]}},
        ],
        "default_next": nxt,
    }
    if i % 2:
        node["params"] = {"max_turns": 4, "min_turns": 1}
    return node
