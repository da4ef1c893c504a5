"""A per-instance memo for methods: `functools.lru_cache` on a method is one table for the whole class,
keyed by `self`, so it keeps every instance alive for the life of the process."""

from __future__ import annotations

import functools


def memoized_method(method):
    """`method(self, *args)` computed once per instance and arguments (hashable positional ones), kept in
    the instance's `__dict__`: it goes when the instance goes, and a `__getstate__` that keeps only the
    instance's own fields leaves it out of a pickle."""
    slot = f"_memo_{method.__name__}"

    @functools.wraps(method)
    def memoized(self, *args):
        memo = self.__dict__.get(slot)
        if memo is None:
            memo = self.__dict__[slot] = {}
        try:
            return memo[args]
        except KeyError:
            value = memo[args] = method(self, *args)
            return value

    return memoized
