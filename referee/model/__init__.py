"""The model: frozen typed values every layer above the core shares (a bot's spec, a tournament's
settings, a stopping rule, a match as scheduled and played, teams). It imports only the core."""

from referee.model.rules import (
    CONFIDENCE,
    FAIRNESS,
    MAX_DEAL_SETS,
    ROUNDS_KEY,
    SCHEDULES,
    STOPPED_KEY,
    TIE_ELO,
    Claim,
    Round,
    Rule,
    RuleError,
    Stop,
    Table,
)
from referee.model.seating import Played, Schedule, Seating, deal_seed, deal_set_of, master_seed
from referee.model.specs import (
    ABSENT,
    BOT_NAME,
    EXECUTORS,
    ISOLATIONS,
    PER_PROCESS,
    PROTOCOLS,
    RELEASES,
    SANDBOXES,
    BotSpec,
    ConfigError,
    ExecutorSpec,
    Limits,
    TournamentConfig,
    publication,
)

__all__ = [
    "ABSENT", "BOT_NAME", "CONFIDENCE", "EXECUTORS", "FAIRNESS", "ISOLATIONS", "MAX_DEAL_SETS", "PER_PROCESS",
    "PROTOCOLS", "RELEASES", "ROUNDS_KEY", "SANDBOXES", "SCHEDULES", "STOPPED_KEY", "TIE_ELO", "BotSpec", "Claim",
    "ConfigError", "ExecutorSpec", "Limits", "Played", "Round", "Rule", "RuleError", "Schedule", "Seating", "Stop",
    "Table", "TournamentConfig", "deal_seed", "deal_set_of", "master_seed", "publication",
]
