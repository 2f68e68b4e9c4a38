"""The model: frozen typed values every layer above the core shares (a bot's spec, a tournament's
settings, a stopping rule, a match as scheduled and played, teams, the modes a competition runs in).
It imports only the core."""

from referee.model.modes import (
    Absent,
    BotProtocol,
    EntryStatus,
    ExecutorKind,
    Isolation,
    Lineup,
    Release,
    SandboxMode,
    ScheduleKind,
)
from referee.model.rules import (
    CONFIDENCE,
    FAIRNESS,
    MAX_DEAL_SETS,
    TIE_ELO,
    Claim,
    Round,
    Rule,
    RuleError,
    Stop,
    Table,
)
from referee.model.seating import Played, Schedule, Seating, deal_seed, deal_set_of, deal_set_seed, master_seed
from referee.model.specs import (
    BOT_NAME,
    PER_PROCESS,
    BotSpec,
    ConfigError,
    ExecutorSpec,
    Limits,
    PoolSpec,
    TournamentConfig,
    publication,
)

__all__ = [
    "BOT_NAME", "CONFIDENCE", "FAIRNESS", "MAX_DEAL_SETS", "PER_PROCESS", "TIE_ELO", "Absent", "BotProtocol",
    "BotSpec", "Claim", "ConfigError", "EntryStatus", "ExecutorKind", "ExecutorSpec", "Isolation", "Limits",
    "Lineup", "Played", "PoolSpec", "Release", "Round", "Rule", "RuleError", "SandboxMode", "Schedule", "ScheduleKind",
    "Seating", "Stop", "Table", "TournamentConfig", "deal_seed", "deal_set_of", "deal_set_seed", "master_seed",
    "publication",
]
