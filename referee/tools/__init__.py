"""Developer tools, run from a checkout: ``python -m referee.tools.strength`` (bot
strength on duplicate deals, in process), ``python -m referee.tools.soak`` (every
sample bot through the real referee, every fault counted) and ``python -m
referee.tools.sprt_simulation`` (the SPRT's error rates and the games it saves)."""
