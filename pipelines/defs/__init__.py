"""Each area under pipelines/defs/ exposes `defs`; pipelines/definitions.py merges them all."""
