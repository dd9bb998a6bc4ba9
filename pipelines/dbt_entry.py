"""`gpu-ledger-dbt [--in DIR] <dbt arguments>`: dbt itself, started from inside DIR.

Why (issue 23): dbt reuses its parse of the project (`<target>/partial_parse.msgpack`) only while the
profile renders the same connection values and the same `--vars`; any difference means a parse from
scratch (8.5 s on this machine, against 4.3 s for a whole partial-parse start). The ledger's location
reaches dbt's profile as a var, so an absolute path made every warehouse home parse the project once
more. The pipeline therefore runs dbt inside the home and gives it the ledger as the relative path
`ledger.duckdb` (`DBT_LEDGER_VARS`): every home renders the same profile, and a new home starts from
the parse `gpu-ledger prepare` left in `dbt/target` (dagster-dbt copies it into the home's target).
The project and profiles folders are passed as absolute paths, so the working directory changes only
what the relative ledger path means.

With GPU_LEDGER_DBT_SERVER set, the command runs in a warm dbt process instead of this one
(`pipelines/dbt_server.py`: dbt already imported, ~2 CPU s less per command); same command, same
streams, same exit code.
"""

from __future__ import annotations

import os
import sys

# The vars every in-home dbt command passes (build, docs, and the parse `gpu-ledger prepare` runs):
# same string everywhere, so dbt's partial-parse state check matches across homes.
DBT_LEDGER_VARS: dict[str, str] = {"ledger_db": "ledger.duckdb"}


def main(argv: list[str] | None = None) -> None:
    """Change into `--in DIR` (when given first), then hand the remaining arguments to dbt's CLI."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--in"]:
        if len(args) < 2:
            sys.exit("gpu-ledger-dbt: --in needs a folder")
        os.chdir(args[1])
        args = args[2:]
    from pipelines.dbt_server import run_in_server

    code = run_in_server(args)
    if code is not None:
        sys.exit(code)
    from dbt.cli.main import cli  # here, not at the top: the pipeline imports DBT_LEDGER_VARS without dbt

    cli(args=args, prog_name="dbt")  # click exits the process with dbt's own return code


if __name__ == "__main__":
    main()
