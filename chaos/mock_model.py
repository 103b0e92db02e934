"""A deterministic OpenAI-compatible chat model, so a target can run its agent loop with no provider.

Round one, when tools are offered and the turn has no tool result yet: it calls the first tool, filling
its required string or string-array parameters with the question. Afterwards it answers extractively:
the sentences of the hits that share most terms with the question, each followed by the `[ref]` marker of
the hit it came from. Hits are read from tool results (JSON; any object with `text` and `ref` is a hit, or text
in `Source ID [ref]:` blocks, as R2R's search tool answers) and from retrieved context placed in the prompt as
`<source id="n">…</source>` (how RAG front ends such as Open WebUI pass their retrieval to the model). Same
request, same answer, same token counts.

`embed()` gives deterministic embeddings (hashed terms and CJK bigrams), so a target that embeds its
documents through the same OpenAI-compatible endpoint retrieves without any model download.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import time
from typing import Any

from pydantic import BaseModel

from chaos.mock_prompts import answer_internal

MODELS = ("rig-mock", "rig-mock-mini")  # the ids it lists; it answers any id the same way, and names it back
REFUSAL = "未找到依据：所选资料中没有能够直接回答这个问题的内容。"
_TERMS = re.compile(r"[\u3400-\u9fff]|[A-Za-z]{2,}|\d+")
_SENTENCES = re.compile(r"(?<=[。！？!?])\s*|(?<=\.)(?!\d)\s*")  # "2.9%" is not a sentence end
_PIECE = re.compile(r"[\u3400-\u9fff]{1,2}|[A-Za-z]+|\d+(?:\.\d+)?|\s+|.", re.S)
MAX_SENTENCES = 3


class MockTurn(BaseModel):
    """What the mock reads from a chat request."""

    question: str
    tools: list[dict[str, Any]]
    hits: list[dict[str, Any]]
    tool_results: int
    prompt_tokens: int


def count_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: CJK characters, words and numbers."""
    return max(1, len(_TERMS.findall(text)))


def _find_hits(value: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(value, dict):
        if isinstance(value.get("text"), str) and "ref" in value:
            out.append(value)
            return
        for v in value.values():
            _find_hits(v, out)
    elif isinstance(value, list):
        for v in value:
            _find_hits(v, out)


_SOURCE_OPEN = re.compile(r'<source\b[^>]*?\sid="([^"]+)"[^>]*>')
_SOURCE = re.compile(r'<source\b[^>]*>.*?</source>', re.S)


def _sources_in(text: str) -> list[dict[str, Any]]:
    """Each `</source>` closes the last `<source id=…>` opened before it (instructions that merely mention the
    tag, as RAG templates do, are not sources)."""
    out: list[dict[str, Any]] = []
    for piece in text.split("</source>")[:-1]:
        opened = list(_SOURCE_OPEN.finditer(piece))
        if opened:
            out.append({"ref": opened[-1].group(1), "text": piece[opened[-1].end():].strip()})
    return out


_CHUNK_LINE = re.compile(r'^\{.*"reference_id".*\}$', re.M)


def _chunk_lines(text: str) -> list[dict[str, Any]]:
    """Lines that are JSON objects with `reference_id` and `content`: one retrieved chunk each."""
    out: list[dict[str, Any]] = []
    for line in _CHUNK_LINE.findall(text):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("content"), str) and value.get("reference_id"):
            out.append({"ref": str(value["reference_id"]), "text": value["content"]})
    return out


_SOURCE_ID = re.compile(r"^Source ID \[([^\]\s]+)\]:[ \t]*$", re.M)


def _source_id_blocks(text: str) -> list[dict[str, Any]]:
    """`Source ID [ref]:` lines, each followed by its text up to the next one (how R2R's search tool answers)."""
    marks = list(_SOURCE_ID.finditer(text))
    return [{"ref": m.group(1), "text": text[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(text)]
             .strip()} for i, m in enumerate(marks)]


def _context_hits(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`<source id="n">text</source>` blocks, chunk lines and `Source ID [n]:` blocks anywhere in the prompt, as
    hits with ref n."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        texts = [content] if isinstance(content, str) else [c.get("text", "") for c in content or []
                                                             if isinstance(c, dict)]
        for text in texts:
            out += _sources_in(text or "") + _chunk_lines(text or "") + _source_id_blocks(text or "")
    return out


def _question_text(content: Any) -> str:
    """The user's own words: multi-part text joined; retrieved context and the instructions around it left out
    (RAG front ends put the question after `</context>`)."""
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    text = str(content or "")
    if "</context>" in text:
        return text.rsplit("</context>", 1)[1].strip()
    return _SOURCE.sub("", text)


def read_request(body: dict[str, Any]) -> MockTurn:
    messages: list[dict[str, Any]] = body.get("messages") or []
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    current = users[-1] if users else -1
    question = _question_text(messages[current].get("content")) if users else ""
    hits: list[dict[str, Any]] = _context_hits(messages)
    results = 0
    for m in messages[current + 1:]:
        if m.get("role") == "tool":
            results += 1
            try:
                _find_hits(json.loads(m.get("content") or "null"), hits)
            except json.JSONDecodeError:
                continue
    prompt = sum(count_tokens(str(m.get("content") or "")) for m in messages)
    return MockTurn(question=question, tools=body.get("tools") or [], hits=hits, tool_results=results,
                    prompt_tokens=prompt)


EMBEDDING_DIM = 256


def embed(text: str) -> list[float]:
    """A deterministic unit vector: each term and CJK bigram hashed into one of `EMBEDDING_DIM` signed buckets."""
    terms = [t.lower() for t in _TERMS.findall(text)]
    cjk = [t for t in terms if len(t) == 1 and "\u3400" <= t <= "\u9fff"]
    terms += [a + b for a, b in zip(cjk, cjk[1:], strict=False)]
    vector = [0.0] * EMBEDDING_DIM
    for term in terms:
        digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % EMBEDDING_DIM
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [round(v / norm, 6) for v in vector]


def embeddings_response(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI `/embeddings` answer for `input` (a string or a list of strings)."""
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else [str(t) for t in raw or []]
    encode = _base64 if body.get("encoding_format") == "base64" else (lambda v: v)
    return {"object": "list", "model": str(body.get("model") or "rig-mock-embed"),
            "data": [{"object": "embedding", "index": i, "embedding": encode(embed(t))} for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": sum(count_tokens(t) for t in texts),
                      "total_tokens": sum(count_tokens(t) for t in texts)}}


def _base64(vector: list[float]) -> str:
    """An embedding as OpenAI sends it when asked for `encoding_format: base64`: little-endian float32s."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def _tool_arguments(tool: dict[str, Any], question: str) -> dict[str, Any]:
    params = (tool.get("function") or {}).get("parameters") or {}
    args: dict[str, Any] = {}
    for name in params.get("required") or list(params.get("properties") or {})[:1]:
        kind = ((params.get("properties") or {}).get(name) or {}).get("type")
        args[name] = [question] if kind == "array" else question
    return args


def answer_text(turn: MockTurn) -> str:
    """The extractive answer with `[ref]` markers, or a refusal when no hit shares a term with the question."""
    asked = set(_TERMS.findall(turn.question.lower()))
    scored: list[tuple[int, int, str, Any]] = []
    order = 0
    for hit in turn.hits:
        for sentence in _SENTENCES.split(hit["text"]):
            sentence = sentence.strip()
            if len(sentence) < 8:
                continue
            overlap = len(asked & set(_TERMS.findall(sentence.lower())))
            if overlap:
                scored.append((-overlap, order, sentence, hit["ref"]))
            order += 1
    if not scored:
        return REFUSAL
    chosen = sorted(scored)[:MAX_SENTENCES]
    chosen.sort(key=lambda c: c[1])
    return "根据所选资料：\n" + "\n".join(f"{s}[{ref}]" for _, _, s, ref in chosen)


class Completion(BaseModel):
    """What the mock decided for one request: a tool call or answer text, with usage."""

    model: str
    text: str = ""
    tool_call: dict[str, Any] | None = None
    prompt_tokens: int
    completion_tokens: int

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_call else "stop"


def complete(body: dict[str, Any]) -> Completion:
    """Decide the mock's reply to a chat-completions request body."""
    model = str(body.get("model") or "rig-mock")
    internal = answer_internal(body.get("messages") or [])
    if internal is not None:
        return Completion(model=model, text=internal, prompt_tokens=sum(count_tokens(str(m.get("content") or ""))
                                                                        for m in body.get("messages") or []),
                          completion_tokens=count_tokens(internal))
    turn = read_request(body)
    if turn.tools and turn.tool_results == 0:
        tool = turn.tools[0]
        name = (tool.get("function") or {}).get("name", "tool")
        args = json.dumps(_tool_arguments(tool, turn.question), ensure_ascii=False)
        digest = hashlib.sha256(f"{turn.question}|{turn.prompt_tokens}".encode()).hexdigest()[:12]
        call = {"id": f"call_{digest}", "type": "function",
                "function": {"name": name, "arguments": args}}
        return Completion(model=model, tool_call=call, prompt_tokens=turn.prompt_tokens,
                          completion_tokens=count_tokens(args))
    text = answer_text(turn)
    return Completion(model=model, text=text, prompt_tokens=turn.prompt_tokens, completion_tokens=count_tokens(text))


def _usage(c: Completion) -> dict[str, int]:
    return {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
            "total_tokens": c.prompt_tokens + c.completion_tokens}


def stream_chunks(c: Completion, completion_id: str, include_usage: bool) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed reply, usage in the last one when asked for."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": c.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if c.tool_call:
        chunks.append(chunk({"tool_calls": [{"index": 0, **c.tool_call}]}))
    else:
        chunks += [chunk({"content": piece}) for piece in _PIECE.findall(c.text)]
    chunks.append(chunk({}, c.finish_reason))
    if include_usage:
        chunks.append({"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": c.model,
                       "choices": [], "usage": _usage(c)})
    return chunks


def full_response(c: Completion, completion_id: str) -> dict[str, Any]:
    """A non-streamed `chat.completion` object."""
    message: dict[str, Any] = {"role": "assistant", "content": c.text or None}
    if c.tool_call:
        message["tool_calls"] = [c.tool_call]
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": c.model,
            "choices": [{"index": 0, "message": message, "finish_reason": c.finish_reason}], "usage": _usage(c)}
