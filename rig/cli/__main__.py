from rig.cli.main import main

main()
