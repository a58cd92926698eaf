"""`python -m fraudstream_operator`: the operator, configured from the environment (see settings.py)."""

from __future__ import annotations

import kopf

from . import handlers  # noqa: F401  (importing registers the handlers with kopf)
from .settings import OperatorSettings


def main() -> None:
    settings = OperatorSettings.from_env()
    kopf.configure(log_prefix=True)
    kopf.run(
        standalone=True,
        clusterwide=settings.clusterwide,
        namespaces=settings.namespaces,
        liveness_endpoint=settings.liveness_endpoint or None,
    )


if __name__ == "__main__":
    main()
