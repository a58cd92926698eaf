"""kopf handlers; importing this package registers them (`kopf run -m fraudstream_operator.handlers`)."""

from . import lifecycle, rules

__all__ = ["lifecycle", "rules"]
