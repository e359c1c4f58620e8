"""Columns built once per Spark context (spark/columns.py)."""

from __future__ import annotations

from pyspark import SparkContext

from spark.columns import PerContext


def test_a_value_is_built_once_per_context_and_again_for_a_new_one(monkeypatch):
    built: list[int] = []

    def build() -> int:
        built.append(len(built))
        return len(built)

    columns = PerContext(build)
    first, second = object(), object()
    monkeypatch.setattr(SparkContext, "_active_spark_context", first)
    assert (columns.get(), columns.get()) == (1, 1)

    monkeypatch.setattr(SparkContext, "_active_spark_context", second)
    assert (columns.get(), columns.get()) == (2, 2)
    assert built == [0, 1]
