"""`python -m fraudstream_localstack run|up|down`."""

import sys

from .stack import main

sys.exit(main())
