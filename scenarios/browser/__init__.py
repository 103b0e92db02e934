"""Browser halves of the reliability cases whose evidence is what a person sees (run with `rig gate --browser`)."""
