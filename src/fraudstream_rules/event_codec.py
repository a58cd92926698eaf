"""The byte form of stored events, shared by every stored shape of a group (whole windows and segments).

Payloads are plain pickled rows: data and Decimals only, checked on load, so state bytes never construct
anything else. MISSING (a field the transaction did not have) stays distinct from JSON null.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Final

from .aggregates import MISSING, StoredEvent
from .exceptions import CorruptStateError

_FORMAT: Final = 1


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data and Decimals only."""

    def find_class(self, module: str, name: str) -> type:
        if (module, name) == ("decimal", "Decimal"):
            return Decimal
        raise pickle.UnpicklingError(f"group state may not reference {module}.{name}")


def plain_dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def plain_loads(data: bytes) -> Any:
    """The inverse of `plain_dumps` for plain data; raises CorruptStateError for anything else."""
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except Exception as exc:
        raise CorruptStateError(f"unreadable state: {exc}") from exc


def encode_events(field_names: tuple[str, ...], events: Sequence[StoredEvent]) -> bytes:
    """Serialize events projected on `field_names`."""
    rows = []
    for event in events:
        missing_mask = 0
        values: list[object] = []
        for position, value in enumerate(event.values):
            if value is MISSING:
                missing_mask |= 1 << position
                values.append(None)
            else:
                values.append(value)
        rows.append((*event[:5], missing_mask, *values))
    return plain_dumps((_FORMAT, field_names, rows))


def decode_events(data: bytes) -> tuple[tuple[str, ...], list[StoredEvent]]:
    """The inverse of `encode_events`; raises CorruptStateError for anything else."""
    try:
        version, field_names, rows = plain_loads(data)
        if version != _FORMAT:
            raise CorruptStateError(f"unknown event segment format {version!r}")
        events = []
        for row in rows:
            mask = row[5]
            values = tuple(MISSING if mask >> position & 1 else value for position, value in enumerate(row[6:]))
            events.append(StoredEvent(row[0], row[1], row[2], row[3], row[4], values))
        return tuple(field_names), events
    except CorruptStateError:
        raise
    except Exception as exc:
        raise CorruptStateError(f"unreadable event segment: {exc}") from exc
