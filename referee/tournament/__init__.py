"""Tournaments: schedules, results and rating tables."""
