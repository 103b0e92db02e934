"""The quality workload: the eval set's 75 case-turns (expert, user, adversarial), run as each case says.

Importing the pack registers its scenarios (`rig.quality.registry`): the direct tool entry, a conversation,
and the fixtures (a real summary for 用户-25, an injected-instruction copy for 对抗-06, repeated hits for
对抗-10).
"""

from scenarios.quality import conversation, direct_tool, fixtures

__all__ = ["conversation", "direct_tool", "fixtures"]
