from rig.cli.main import app

app(prog_name="rig")
