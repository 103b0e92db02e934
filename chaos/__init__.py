"""Fault injection for any target: an OpenAI-compatible LLM fault proxy, an HTTP fault proxy, the target's
own fault points, restarts (through `rig.target.restart`), and chaos schedules applied during `rig load` — all
speaking the rig's one fault vocabulary and control client (`rig.faults`).

    chaos.rules          the proxies' fault rules: what to inject, where, how often (seeded)
    chaos.wire           a small HTTP/1.1 server on asyncio that can also reset or cut a connection
    chaos.mock_model     a deterministic OpenAI-compatible model (`--upstream mock`)
    chaos.llm_proxy      the LLM fault proxy
    chaos.http_proxy     the HTTP fault proxy
    chaos.injectors      apply and roll back a fault through the right channel
    chaos.schedule       the schedule file (Chaos Toolkit's shape: hypothesis, method, rollbacks)
    chaos.runner         runs a schedule beside a load run, keeping every window as evidence
    chaos.analysis       per fault: errors, T-code shifts, recovery, interrupted vs lost, resumed runs
    chaos.ctk            the same actions and probes for Chaos Toolkit experiments
"""
