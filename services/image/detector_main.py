"""The detector as a spark-submit main file (the SparkApplication's pyFiles): `python -m fraudstream_detector`."""

import runpy

runpy.run_module("fraudstream_detector", run_name="__main__", alter_sys=True)
