"""`python -m fraudstream_dashboard [PATH]`: write the dashboard's JSON to PATH (default: the chart's file)."""

from __future__ import annotations

import argparse
from pathlib import Path

from fraudstream_dashboard.overview import CHART_FILE, render


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m fraudstream_dashboard", description=__doc__)
    parser.add_argument("path", nargs="?", type=Path, default=CHART_FILE, help="where to write the JSON")
    path: Path = parser.parse_args().path
    path.write_text(render())
    print(f"dashboard: wrote {path}")


if __name__ == "__main__":
    main()
