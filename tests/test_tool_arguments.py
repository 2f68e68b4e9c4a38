"""The measuring tools (``python -m referee.tools.X``) refuse, in one line, the arguments they cannot
measure with, where they stopped on a traceback (found when mypy began to check them, issue 31)."""

from __future__ import annotations

import pytest

from referee.tools import anchoring, calibration, collusion, coverage, posterior_cost, sprt_simulation


@pytest.mark.parametrize("main, argv, says", [
    # the intervals measured come from the bootstrap: without it, a None where an interval goes
    (coverage.main, ["--bootstrap", "0", "--tournaments", "1", "--limit", "20"], "--bootstrap must be at least 1"),
    (anchoring.main, ["--bootstrap", "0", "--part", "cost", "--cost-trials", "1", "--cost-deal-sets", "2",
                      "--pool-deal-sets", "3", "--kinds", "2-player", "--worlds", "project"],
     "--bootstrap must be at least 1"),
    # the posterior needs two deal sets: with one, no P(a above b) to call
    (calibration.main, ["--deal-sets", "1", "--part", "null", "--tables", "1"], "--deal-sets: 2 or more"),
    # no unit played: no estimate of the pool
    (sprt_simulation.main, ["--units", "0", "--part", "real", "--models", "logistic"], "--units must be at least 1"),
    # --before with no round: no figures of this checkout to print
    (posterior_cost.main, ["--before", ".", "--rounds", "0"], "--rounds must be at least 1"),
])
def test_a_tool_refuses_what_it_cannot_measure_with_a_usage_error(main, argv, says, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert says in capsys.readouterr().err


def test_the_collusion_tool_refuses_a_colluding_file_that_is_no_python_module(tmp_path):
    notes = tmp_path / "colluding.txt"
    notes.write_text("not a module\n")
    with pytest.raises(SystemExit, match="is not a Python module"):
        collusion.field(True, notes)


def test_the_sprt_simulation_stops_in_one_line_on_a_test_without_an_estimate(capsys):
    """A test of no unit (--max-units 0; or units all alike: no variance) has no estimate to tabulate."""
    with pytest.raises(SystemExit, match="a test ended with no estimate"):
        sprt_simulation.main(["--part", "estimates", "--max-units", "0", "--runs", "1", "--models", "logistic",
                              "--lucks", "0"])
