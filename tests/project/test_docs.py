"""The documentation (docs/) builds strictly and says what the code says.

`sphinx -W -n` fails on any warning: a broken cross-reference, a page outside every table of
contents, a diagnostic code without a golden case (the reference extension raises). The site
is written under the test's temporary folder, never into the repository.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.diagnostics import CATALOGUE
from conftest import ROOT

DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q",
                           "-b", "html", "-d", str(out.parent / "doctrees"), str(DOCS), str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr and "ERROR" not in done.stderr, done.stderr[-3000:]
    return out


def test_the_docs_build_strictly(site):
    for page in ("index", "getting-started", "spec", "spec-part3", "reference/cli",
                 "reference/diagnostics", "reference/http-api", "reference/ir", "reference/errors"):
        assert (site / f"{page}.html").is_file(), page


def test_every_diagnostic_code_has_an_entry_with_an_example(site):
    page = (site / "reference" / "diagnostics.html").read_text("utf-8")
    for code, (_, _wording) in CATALOGUE.items():
        section = re.search(rf'<section id="{code.lower()}[^"]*">(.*?)</section>', page, re.S)
        assert section, f"{code} has no entry in the diagnostics reference"
        assert f"tests/golden/{code}_" in section.group(1), f"{code}'s entry has no example"


def test_every_command_has_its_help_in_the_cli_reference(site):
    page = (site / "reference" / "cli.html").read_text("utf-8")
    for command in ("mgc check", "mgc compile", "mgc inspect", "mgc graph", "mgc schema",
                    "mgi run", "mgi test", "mgi fuzz", "mgi serve", "mgi report"):
        assert f">{command}<" in page, command


def test_every_public_exception_has_its_line_in_the_errors_reference(site):
    from test_errors import exception_classes

    page = (site / "reference" / "errors.html").read_text("utf-8")
    for error in exception_classes():
        if not error.__name__.startswith("_"):
            assert f"{error.__module__}.{error.__qualname__}" in page, error


def test_every_spec_section_the_code_cites_is_in_the_docs():
    """A "SPEC x.y" in the code, the tests or the scenarios names a labelled section of
    docs/spec*.md (`(spec-x.y)=`), so a reader can open what the code points at."""
    labels = {m for page in DOCS.glob("spec*.md")
              for m in re.findall(r"^\(spec-([0-9.]+)\)=$", page.read_text("utf-8"), re.M)}
    cited = {}
    for folder in ("compiler", "interpreter", "tests", "scenarios"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".json", ".txt", ".md") and path.is_file():
                for number in re.findall(r"SPEC ([0-9]+(?:\.[0-9]+)?)", path.read_text("utf-8", errors="replace")):
                    cited.setdefault(number, path.relative_to(ROOT))
    missing = {n: str(p) for n, p in cited.items() if n not in labels}
    assert not missing, f"cited but not in docs/spec*.md: {missing}"


def test_the_readmes_quick_start_is_the_getting_started_pages_first_section():
    readme = (ROOT / "README.md").read_text("utf-8")
    page = (DOCS / "getting-started.md").read_text("utf-8")
    assert _first_section(page) == _section(readme, "## Two commands")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start:following if following != -1 else len(text)].strip()


def _first_section(page: str) -> str:
    return _section(page, page[page.index("\n## ") + 1:].split("\n", 1)[0])
