"""An Aegis bot whose code is not all in its version (the red team): its play comes from
``strategy``, a module of its own directory. What the reviewer reads, and what the runner hashes,
is ``strategy.py``; what Python runs may be ``__pycache__/strategy.cpython-XY.pyc``, a compiled
file the version leaves out, which an *unchecked-hash* pyc makes Python take whatever the source
says (PEP 552). Each process logs ``STRATEGY NAME`` (the strategy it runs) once."""

from __future__ import annotations

import strategy

from referee.bot import run_bot

print(f"STRATEGY {strategy.NAME}", flush=True)


if __name__ == "__main__":
    run_bot(lambda obs, legal, game: strategy.choose(legal), default_name="changer")
