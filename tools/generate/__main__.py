"""`python -m tools.generate --help`."""

from tools.generate.cli import app

app(prog_name="python -m tools.generate")
