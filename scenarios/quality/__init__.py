"""The quality workload: the eval set's 75 case-turns (expert, user, adversarial), run as each case says.

`SCENARIOS` names which scenario runs a case: the direct tool entry, a conversation, or one of the
fixtures (a real summary, an injected-instruction copy, repeated hits).
"""

from __future__ import annotations

from collections.abc import Callable

from rig.quality.driver import CaseDriver
from scenarios.quality.conversation import conversation
from scenarios.quality.direct_tool import direct_tool
from scenarios.quality.fixtures import injection, repeat_same, summary_fixture

Scenario = Callable[[CaseDriver], None]

SCENARIOS: dict[str, Scenario] = {
    "direct_tool": direct_tool,
    "conversation": conversation,
    "summary_fixture": summary_fixture,
    "injection": injection,
    "repeat_same": repeat_same,
}

FIXTURE_CASES = {"用户-25": "summary_fixture", "对抗-06": "injection", "对抗-10": "repeat_same"}
