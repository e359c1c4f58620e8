"""Columns built once per Spark context.

A column is built in the JVM, one call through py4j for every function and name in it. The
price query's verdict takes some eighty such calls and its aggregation some thirty; built
afresh for every batch, they were milliseconds of each batch spent before its job began. A
column names what it reads rather than holding it, so one built once serves every frame of
the same columns while the context that built it lives.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from pyspark import SparkContext

T = TypeVar("T")


class PerContext(Generic[T]):
    """What ``build`` returns for the arguments of ``get``, built on first use and again once the
    active Spark context is another one (a stopped session's columns belong to its JVM)."""

    def __init__(self, build: Callable[..., T]) -> None:
        self._build = build
        self._context: object | None = None
        self._built: dict[tuple[Hashable, ...], T] = {}

    def get(self, *args: Hashable) -> T:
        context = SparkContext._active_spark_context
        if context is not self._context:
            self._built, self._context = {}, context
        if args not in self._built:
            self._built[args] = self._build(*args)
        return self._built[args]
