"""`python -m fraudstream_localstack run|up|down`: the whole pipeline on the local infrastructure."""

import sys

from .stack import Component, StackConfig, main


def _components() -> list[Component]:
    from .components import AlertTail, detector, generator
    from .operator_component import OperatorComponent

    config = StackConfig()
    return [OperatorComponent(), detector(config), generator(), AlertTail()]


sys.exit(main(components_factory=_components))
