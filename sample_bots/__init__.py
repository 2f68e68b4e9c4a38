"""Sample bots for the referee: ``python -m sample_bots.NAME --address HOST:PORT --name NAME --token TOKEN``.

- ``random``: uniform over the legal actions.
- ``heuristic``: plays each game sensibly by explicit rules.
- ``search``: determinized Monte Carlo with the project's own engine.
- ``weakened``: the heuristic bot playing a random legal action with probability ``--noise``.
- ``node/``: a Node.js bot, from the .proto alone.
"""
