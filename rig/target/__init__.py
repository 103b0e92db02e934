"""Reaching a target: connecting (embedded or external, through the configured adapter), readiness,
accounts, the shared library of the gate and quality runs, and recording what a case does.

    rig.target.open        connect() for every command; open_target() for the gate and quality
    rig.target.embedded    the embedded reference workbench as a child process
    rig.target.readiness   waiting on the target's readiness path
    rig.target.restart     restarting a target (local process, command)
    rig.target.setup       the library of accounts A and B (projects, corpus, ingest ledger)
    rig.target.session     TargetSession: a connected target as cases see it
    rig.target.recording   RecordingContext: every exchange, observation, run and item to the store
    rig.target.spans       the target's spans received over OTLP
"""
