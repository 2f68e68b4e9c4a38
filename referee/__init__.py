"""Tournament match runner for card-game bots: rules engines, referee, tournaments."""

__version__ = "0.1.0"
