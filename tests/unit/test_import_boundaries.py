"""What the shipped packages may import: the operator, the detector and the generator never import the local stack
(it is development tooling, and they run in the image without it), and the local stack never imports the operator
(it runs it as a process). Checked on the source's import statements, so a new one fails here, not in the image."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# (package directory, packages it must not import)
BOUNDARIES = [
    (ROOT / "operator" / "fraudstream_operator", {"fraudstream_localstack"}),
    (ROOT / "services" / "detector", {"fraudstream_localstack", "fraudstream_operator"}),
    (ROOT / "services" / "generator", {"fraudstream_localstack", "fraudstream_operator"}),
    (ROOT / "src" / "fraudstream_localstack", {"fraudstream_operator"}),
    (ROOT / "src" / "fraudstream_rules", {"fraudstream_localstack", "fraudstream_operator", "fraudstream_kafka"}),
]


def imported_packages(source: Path) -> set[str]:
    """The top-level packages `source` imports absolutely (relative imports stay inside its own package)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_imported_packages_sees_plain_from_and_deferred_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import a.b\nfrom c.d import e\nfrom . import f\n\ndef g():\n    from h import i\n")
    assert imported_packages(source) == {"a", "c", "h"}


@pytest.mark.parametrize(("package", "forbidden"), BOUNDARIES, ids=lambda p: p.name if isinstance(p, Path) else "")
def test_no_import_crosses_a_boundary(package: Path, forbidden: set[str]) -> None:
    sources = sorted(package.rglob("*.py"))
    assert sources, f"no sources under {package}"
    crossing = {str(s.relative_to(ROOT)): sorted(imported_packages(s) & forbidden) for s in sources}
    assert {path: names for path, names in crossing.items() if names} == {}
