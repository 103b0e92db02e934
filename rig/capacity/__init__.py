"""`rig capacity`: the highest offered load a deployment holds within its SLOs, what saturates first, and
whether the client itself was the bottleneck."""
