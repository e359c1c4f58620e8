"""The registry of reducer queries (reducers/queries.py) is what the Spark application starts,
the pools it schedules and the triggers it reads: one entry a query."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any, cast

import pytest

from reducers import topics
from reducers.queries import BY_NAME, QUERIES, ReducerQuery, lag_objectives
from spark.config import load
from spark.jobs.reducers import POOLS, starters


def test_each_registered_query_names_a_spark_job_that_starts_it_under_the_same_name():
    for query in QUERIES:
        job = importlib.import_module(query.job)
        assert query.name == job.QUERY_NAME
        assert callable(job.start)


def test_the_application_starts_and_schedules_exactly_the_registered_queries():
    started = starters(cast(Any, None), bootstrap="", redis_url="", checkpoint_root=Path("/none"), mode="microbatch")
    assert list(started) == [query.name for query in QUERIES]
    assert {query.name: query.pool for query in QUERIES} == POOLS


def test_a_querys_trigger_comes_from_its_variable_or_its_registered_default():
    settings = load({"SPARK_LIABILITY_TRIGGER": "5 seconds"})
    assert settings.triggers["liability"] == "5 seconds"
    assert settings.triggers["movers"] == BY_NAME["movers"].trigger


def test_every_query_and_the_real_time_applier_has_a_lag_objective():
    assert set(lag_objectives()) == {topics.PRICE_APPLIER, *BY_NAME}


def test_a_query_starts_at_the_earliest_or_latest_offsets_only():
    with pytest.raises(ValueError, match="earliest or latest"):
        dataclasses.replace(QUERIES[0], starting_offsets="2026-01-01")


def test_names_are_unique():
    assert len(BY_NAME) == len(QUERIES)
    assert all(isinstance(query, ReducerQuery) for query in QUERIES)
