"""What the entrant compiles into __pycache__/strategy.cpython-XY.pyc (unchecked hash) between two
runs: another strategy, the last legal action, that no version sees."""

NAME = "planted"


def choose(legal: list[str]) -> int:
    return len(legal) - 1
