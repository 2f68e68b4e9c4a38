"""The strategy the reviewer reads and the version hashes: the first legal action."""

NAME = "reviewed"


def choose(legal: list[str]) -> int:
    return 0
