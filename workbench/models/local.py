"""A deterministic local model: plans searches, then composes an extractive answer with citations.

It reads the same chat messages an OpenAI-compatible model would get (system prompt with the selected
papers, history, tool results as JSON) and streams its answer piece by piece with configurable delays,
so the agent loop, streaming and timings are exercised for real without any model provider.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from workbench.config import RuntimeSettings
from workbench.models.base import ModelRequest, ModelResult, OnText, ToolCall
from workbench.text import count_tokens, search_tokens, split_sentences

LOCAL_MODELS = {"local-extractive": 4, "local-extractive-mini": 2}
THOROUGH = ("查清", "全面", "彻底", "逐一", "逐项")
SUMMARISE = ("概括", "总结", "主要发现", "讲什么", "综述")
REFUSAL = "未找到依据：所选资料中没有能够直接回答这个问题的内容。"
_PAPER_LINE = re.compile(r"^- \[(?P<doc>[^\]]+)\] (?P<pid>\S+) 《(?P<title>.*)》$", re.M)
_TITLE_ASK = re.compile(r"《([^》]+)》")
_NUMBER_ASK = re.compile(r"多少个?百分点|精确(?:提高|增加|降低)?多少|必须给(?:出)?数字|how many percentage points", re.I)
NO_NUMBER = "未找到依据：所选资料没有给出所问的具体数字，以下只是资料实际讨论的内容。"
_LENGTH = re.compile(r"(\d+)\s*[–\-~～至到]\s*(\d+)\s*字")
_PIECE = re.compile(r"[\u3400-\u9fff]{1,2}|[A-Za-z]+|\d+(?:\.\d+)?|\s+|.", re.S)
MIN_RELEVANCE = 0.2
# The local model's bilingual vocabulary for this domain: Chinese questions also search English text.
GLOSSARY = {
    "买家保护": "buyer protection", "徽章": "badge", "声誉": "reputation", "口碑": "reputation", "溢价": "premium",
    "信号": "signal signalling", "福利": "welfare", "逆向选择": "adverse selection", "道德风险": "moral hazard",
    "保修": "warranty", "车商": "dealer", "二手车": "used car", "拍卖": "auction", "反馈": "feedback",
    "评价": "feedback", "奖励": "reward", "认证": "authenticated certification", "谈判": "negotiation",
    "议价": "bargaining negotiation", "整数": "round", "报价": "offers", "售出": "sell", "披露": "disclosure",
    "匹配": "matching", "好消息": "good news", "坏消息": "bad news", "门槛": "threshold", "涉入": "involvement",
    "眼动": "eye tracking", "照片": "photos", "利润": "profits", "消费者剩余": "consumer surplus",
    "反事实": "counterfactual", "综述": "review", "偏差": "bias", "质量": "quality", "销量": "sales",
    "负评": "negative feedback", "报复": "retaliation", "信任": "trust", "监管": "regulation", "方法": "method",
    "实验": "experiment", "模型": "model", "刷好评": "fake praise", "保障": "protection warranty guarantee",
}
BROAD_QUERY = "摘要 abstract 研究发现 findings 结论"


def with_glossary(query: str) -> str:
    """The query plus English renderings of the domain terms it contains."""
    extra = [en for zh, en in GLOSSARY.items() if zh in query]
    return f"{query} {' '.join(dict.fromkeys(extra))}".strip()


@dataclass(frozen=True)
class Hit:
    ref: int
    paper_id: str | None
    page: int | None
    text: str


@dataclass(frozen=True)
class Turn:
    """What the model sees of the current turn."""

    question: str
    previous_question: str | None
    papers: dict[str, str]  # paper_id → title
    tool_rounds: list[list[dict[str, Any]]]  # each round's tool results (parsed JSON)
    queries_sent: list[str]


def read_turn(messages: list[dict[str, Any]]) -> Turn:
    """Split the chat into the current question, the earlier one, the papers and this turn's tool results."""
    user_idx = [i for i, m in enumerate(messages) if m["role"] == "user"]
    current = user_idx[-1] if user_idx else len(messages) - 1
    previous = messages[user_idx[-2]]["content"] if len(user_idx) > 1 else None
    papers: dict[str, str] = {}
    for m in messages:
        if m["role"] == "system":
            for match in _PAPER_LINE.finditer(m["content"]):
                papers[match.group("pid")] = match.group("title")
    rounds: list[list[dict[str, Any]]] = []
    queries: list[str] = []
    for m in messages[current + 1:]:
        if m["role"] == "assistant" and m.get("tool_calls"):
            rounds.append([])
            for call in m["tool_calls"]:
                queries.extend(json.loads(call["function"]["arguments"]).get("queries", []))
        elif m["role"] == "tool":
            if not rounds:
                rounds.append([])
            rounds[-1].append(json.loads(m["content"]))
    return Turn(messages[current]["content"], previous, papers, rounds, queries)


def strip_known_titles(text: str, papers: dict[str, str]) -> str:
    """Drop 《titles》 of selected papers: they say which paper, not what to look for."""
    def keep(match: re.Match[str]) -> str:
        return "" if any(_same_title(match.group(1), t) for t in papers.values()) else match.group(0)

    return _TITLE_ASK.sub(keep, text)


def _summarising(question: str) -> bool:
    return any(word in question for word in SUMMARISE)


def plan_queries(turn: Turn) -> list[str]:
    """The searches this model wants for the question, in order (one per round)."""
    question = strip_known_titles(turn.question.strip(), turn.papers)
    previous = strip_known_titles(turn.previous_question or "", turn.papers)
    base = f"{question} {previous}".strip()
    if _summarising(question):
        base += " 摘要 abstract 研究发现 findings"
    plan = [base]
    if any(word in question for word in THOROUGH):
        core = re.sub(r"^(请|帮我|麻烦)?(查清|全面|彻底|逐一|逐项)?", "", question)
        core = re.sub(r"(并给依据|并给出依据|的关系|关系)[。？?]*$", "", core)
        plan.extend(p for p in re.split(r"[与和及、]", core) if len(p.strip()) >= 2)
    return [with_glossary(q) for q in plan[:3]]


def _hits(turn: Turn) -> list[Hit]:
    seen: dict[int, Hit] = {}
    for round_results in turn.tool_rounds:
        for result in round_results:
            for h in result.get("hits", []) if result.get("ok") else []:
                seen.setdefault(h["ref"], Hit(h["ref"], h.get("paper_id"), h.get("page"), h["text"]))
    return list(seen.values())


def _last_round_failed(turn: Turn) -> bool:
    return bool(turn.tool_rounds) and all(not r.get("ok") for r in turn.tool_rounds[-1])


def _target_sentences(question: str, max_sentences: int) -> tuple[int, int]:
    """(sentences, minimum characters) the answer should have."""
    if "一句话" in question:
        return 2, 0
    if "两句话" in question or "两三句" in question:
        return 2, 0
    m = _LENGTH.search(question)
    if m:
        return 12, int(m.group(1))
    return max_sentences, 0


def _same_title(asked: str, title: str) -> bool:
    a, b = set(search_tokens(asked)), set(search_tokens(title))
    return bool(a and b) and len(a & b) / len(a | b) >= 0.5


def _mentions_title(sentence: str, title: str) -> bool:
    """Headers and boilerplate that repeat a paper's title carry no finding."""
    norm = re.sub(r"[\s:：\-–]+", "", title.lower())
    return len(norm) > 6 and norm in re.sub(r"[\s:：\-–]+", "", sentence.lower())


def compose_answer(turn: Turn, max_sentences: int) -> str:
    """An extractive answer: the most relevant hit sentences, each followed by its citation marker."""
    hits = _hits(turn)
    question = strip_known_titles(turn.question, turn.papers)
    summarising = _summarising(question)
    asked = with_glossary(question + " " + strip_known_titles(turn.previous_question or "", turn.papers))
    q_terms = set(search_tokens(asked))
    titles = list(turn.papers.values())
    # Query terms that occur nowhere in the evidence are instructions ("用两句话", "解释"), not content.
    evidence_terms = set().union(*(search_tokens(h.text) for h in hits)) if hits else set()
    informative = q_terms & evidence_terms
    summarising = summarising or (bool(hits) and BROAD_QUERY in turn.queries_sent)
    candidates: list[tuple[float, int, Hit, str]] = []
    order = 0
    for hit in hits:
        lead = hit.text.lower()
        leading = summarising and any(w in lead for w in ("abstract", "摘要", "introduction", "导论"))
        for sentence in split_sentences(hit.text):
            s_terms = set(search_tokens(sentence))
            if not s_terms or any(_mentions_title(sentence, t) for t in titles):
                continue
            matched = len(informative & s_terms)
            score = matched / max(3, len(informative)) + (0.3 if leading else 0.0)
            if matched or leading:
                candidates.append((score, order, hit, sentence))
            order += 1
    prefix = ""
    for asked in _TITLE_ASK.findall(turn.question):
        if turn.papers and not any(_same_title(asked, t) for t in turn.papers.values()):
            prefix += f"当前选定资料中没有《{asked}》，不能引用或代为证明它。"
    if not candidates or max(c[0] for c in candidates) < MIN_RELEVANCE:
        if _last_round_failed(turn):
            return prefix + "检索工具返回错误，本轮未能取得证据，因此无法给出有依据的回答。"
        if not turn.tool_rounds:
            return prefix + "本轮已达到工具调用上限，未能检索资料，因此无法给出有依据的回答。"
        topics = "；".join(dict.fromkeys(h.text[:40] for h in hits[:2]))
        return prefix + REFUSAL + (f"本轮命中的片段主要讨论：{topics}。" if topics else "")
    want, min_chars = _target_sentences(turn.question, max_sentences)
    candidates.sort(key=lambda c: (-c[0], c[1]))
    chosen: list[tuple[Hit, str]] = []
    used: set[str] = set()
    by_paper: dict[str | None, tuple[float, int, Hit, str]] = {}
    for c in candidates:
        by_paper.setdefault(c[2].paper_id, c)
    if len(by_paper) > 1:
        for c in sorted(by_paper.values(), key=lambda c: (-c[0], c[1])):
            if c[0] >= MIN_RELEVANCE and c[3] not in used:
                chosen.append((c[2], c[3]))
                used.add(c[3])
    for c in candidates:
        length = sum(len(s) for _, s in chosen)
        if len(chosen) >= want and length >= min_chars:
            break
        if c[3] not in used and (c[0] >= MIN_RELEVANCE or length < min_chars):
            chosen.append((c[2], c[3]))
            used.add(c[3])
    lines = []
    if _NUMBER_ASK.search(turn.question) and not any(ch.isdigit() for _, sentence in chosen for ch in sentence):
        prefix += NO_NUMBER
    if summarising and len(turn.papers) == 1:
        (pid, title), = turn.papers.items()
        first = chosen[0][0].ref
        lines.append(f"《{title}》的主要内容如下[{first}:file]。")
    lines.extend(f"{sentence}[{hit.ref}]" for hit, sentence in chosen)
    return prefix + "根据所选资料：\n" + "\n".join(lines)


class LocalModel:
    """The deterministic local provider (`local-extractive`, `local-extractive-mini`)."""

    provider = "local"

    def __init__(self, model: str, settings: RuntimeSettings) -> None:
        self.model = model
        self.settings = settings
        self.max_sentences = LOCAL_MODELS[model]

    async def generate(self, request: ModelRequest, on_text: OnText) -> ModelResult:
        turn = read_turn(request.messages)
        input_tokens = sum(count_tokens(str(m.get("content") or "")) for m in request.messages)
        if request.tools:
            call = self._next_call(turn, request.request_id)
            if call is not None:
                args = json.dumps(call.arguments, ensure_ascii=False)
                return ModelResult("", [call], input_tokens, count_tokens(args), None, self.model,
                                   finish_reason="tool_calls")
        text = compose_answer(turn, self.max_sentences)
        await self._stream(text, on_text)
        return ModelResult(text, [], input_tokens, count_tokens(text), None, self.model)

    def _next_call(self, turn: Turn, request_id: str) -> ToolCall | None:
        plan = plan_queries(turn)
        if _last_round_failed(turn) and len(turn.tool_rounds) < 2:
            query = turn.queries_sent[-1] if turn.queries_sent else plan[0]
        elif len(turn.queries_sent) < len(plan) and not _last_round_failed(turn):
            query = plan[len(turn.queries_sent)]
        elif turn.tool_rounds and not _hits(turn) and not _last_round_failed(turn) \
                and BROAD_QUERY not in turn.queries_sent:
            query = BROAD_QUERY  # nothing matched the wording: read the selected papers' abstracts instead
        else:
            return None
        return ToolCall(f"call_{request_id[-8:]}", "internal_search", {"queries": [query]})

    async def _stream(self, text: str, on_text: OnText) -> None:
        pieces = _PIECE.findall(text)
        await asyncio.sleep(self.settings.first_token_delay_ms / 1000)
        delay = self.settings.token_delay_ms / 1000
        for i, piece in enumerate(pieces):
            if i:
                await asyncio.sleep(delay)
            await on_text(piece, "answer")
