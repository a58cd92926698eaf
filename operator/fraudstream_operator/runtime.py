"""What the handlers share for the lifetime of one operator run, kept in kopf's memo."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .metrics import RULES_MANAGED
from .rules_producer import RulesProducer
from .settings import OperatorSettings
from .topic_state import TopicState

MEMO_KEY = "fraudstream_runtime"


class ManagedRules:
    """Keys of the FraudRules this operator manages; the `rules managed` gauge follows it."""

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._keys = set(keys)
        self._lock = threading.Lock()
        RULES_MANAGED.set(len(self._keys))

    def add(self, key: str) -> None:
        with self._lock:
            self._keys.add(key)
            RULES_MANAGED.set(len(self._keys))

    def discard(self, key: str) -> None:
        with self._lock:
            self._keys.discard(key)
            RULES_MANAGED.set(len(self._keys))

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)


@dataclass(frozen=True)
class Runtime:
    settings: OperatorSettings
    publisher: RulesProducer
    topic: TopicState
    managed: ManagedRules


def runtime_of(memo: Mapping[str, Any]) -> Runtime:
    """The runtime the startup handler put into the memo (every resource handler runs after it)."""
    runtime = memo[MEMO_KEY]
    if not isinstance(runtime, Runtime):
        raise TypeError(f"memo[{MEMO_KEY!r}] holds {type(runtime).__name__}, not a Runtime")
    return runtime
