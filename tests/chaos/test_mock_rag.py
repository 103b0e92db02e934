"""The mock model for RAG front ends: it answers from `<source id>` context, and embeds deterministically."""

from __future__ import annotations

import math
from pathlib import Path

import httpx
import pytest

from chaos import mock_model
from rig.config import ModelProxyConfig
from rig.ports import free_port
from rig.target.model_proxy import ModelProxy

TEMPLATE = ('### Task:\nCite as [id] only when the <source> tag has an id (e.g., <source id="1">).\n<context>\n'
            '<source id="1" name="p32.pdf" resource-id="abc">We estimate that total welfare increased by 2.9% after '
            'the program. Sellers raised their quality.</source>\n<source id="2" name="p13.pdf">Warranties signal '
            'quality to buyers.</source>\n</context>\n\nWhat does the 2.9% welfare figure mean?')


def test_the_answer_comes_from_the_retrieved_context_with_its_source_ids() -> None:
    turn = mock_model.read_request({"messages": [{"role": "user", "content": TEMPLATE}]})
    assert turn.question == "What does the 2.9% welfare figure mean?"  # the instructions around it are not asked
    assert [h["ref"] for h in turn.hits] == ["1", "2"]  # the id attribute, not resource-id, not the template's example
    answer = mock_model.answer_text(turn)
    assert "total welfare increased by 2.9% after the program.[1]" in answer  # "2.9" is not a sentence end


def test_embeddings_are_deterministic_unit_vectors_that_rank_by_shared_terms() -> None:
    body = {"input": ["total welfare rose 2.9 percent", "total welfare increased", "warranty signals"]}
    first = mock_model.embeddings_response(body)
    assert first == mock_model.embeddings_response(body)
    vectors = [d["embedding"] for d in first["data"]]
    assert all(abs(math.sqrt(sum(v * v for v in vec)) - 1) < 1e-3 for vec in vectors)
    cos = [sum(a * b for a, b in zip(vectors[0], v, strict=True)) for v in vectors[1:]]
    assert cos[0] > cos[1]


def test_the_rig_starts_its_model_proxy_where_the_target_calls_and_drives_its_rules(tmp_path: Path) -> None:
    proxy = ModelProxy(ModelProxyConfig(listen=f"127.0.0.1:{free_port()}", upstream="mock"), tmp_path).start()
    try:
        rule = proxy.add({"mode": "empty", "times": 1})
        assert [r["rule_id"] for r in proxy.rules()] == [rule]
        reply = httpx.post(f"{proxy.config.url}/v1/embeddings", json={"input": "x"}, timeout=10)
        assert reply.status_code == 200 and len(reply.json()["data"][0]["embedding"]) == mock_model.EMBEDDING_DIM
        proxy.clear()
        assert proxy.rules() == []
    finally:
        served = proxy.server
        proxy.stop()
    assert served is not None and proxy.server is None, "the rig served it itself, from the chaos plug-in"
    with pytest.raises(httpx.TransportError):  # stopping the rig's proxy closes its port
        httpx.get(f"{proxy.config.url}/_rig/healthz", timeout=2)
