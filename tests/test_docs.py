"""The front door and the guides: a short README, links that lead somewhere, each fact once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_helpers.languages import TRANSLATED
from course_tools import guides

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The English pages a reader may land on from GitHub: the README and every guide.
PAGES = [README, *(guides.guide_path(ROOT, name) for name in guides.GUIDES)]
#: Every Markdown page with links to check, translated guides included.
ALL_PAGES = PAGES + [
    guides.guide_path(ROOT, name, language)
    for name in guides.TRANSLATED_GUIDES
    for language in TRANSLATED
]
#: Sentences this long or longer must appear on one page only.
SENTENCE_WORDS = 8

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)


def without_code(text: str) -> str:
    return _FENCE.sub("", text)


def links_of(path: Path) -> list[str]:
    return [found for found in _LINK.findall(without_code(path.read_text(encoding="utf-8")))]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (lower case, punctuation dropped)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """The anchors a link may name: <a id> anchors, and a README's headings."""
    if path.suffix == ".ipynb":
        notebook = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join(
            "".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown"
        )
    else:
        text = without_code(path.read_text(encoding="utf-8"))
    found = set(re.findall(r'<a id="([^"]+)"></a>', text))
    if path.name == "README.md":
        found |= {github_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    return found


def test_the_readme_is_short_and_holds_the_two_commands():
    text = README.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= 200, (
        f"README.md has {lines} lines; keep it under about 200 (move detail to docs/)"
    )
    assert "make lab" in text and "make ci" in text


def test_the_readme_leads_to_every_guide():
    targets = {link.split("#")[0] for link in links_of(README)}
    for name in guides.GUIDES:
        assert f"docs/en/{name}.md" in targets, f"README.md does not link docs/en/{name}.md"


@pytest.mark.parametrize("name", guides.GUIDES)
def test_every_guide_reads_as_sections_with_anchors(name):
    guide = guides.read_guide(guides.guide_path(ROOT, name))
    assert guide.cells[0].id == name, f'docs/en/{name}.md should open with <a id="{name}"></a>'
    for cell in guide.cells:
        first = cell.source.splitlines()[0] if cell.source else ""
        assert first.startswith("#"), (
            f"docs/en/{name}.md, anchor {cell.id!r}: an anchor line goes right before a heading"
        )


@pytest.mark.parametrize("path", ALL_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_an_anchor_that_exist(path):
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run 'course l10n build'")
    for link in links_of(path):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:: checked by no one here; the site's test opens its own
        target, _, anchor = link.partition("#")
        resolved = (path.parent / target).resolve() if target else path
        shown = path.relative_to(ROOT)
        assert resolved.exists(), f"{shown}: the link {link!r} leads to no file"
        if anchor:
            assert anchor in anchors_of(resolved), (
                f"{shown}: the link {link!r} names an anchor that {resolved.relative_to(ROOT)} "
                f'lacks; add <a id="{anchor}"></a> before the heading it means'
            )


def sentences(path: Path) -> set[str]:
    """The page's sentences of SENTENCE_WORDS words or more, with markup and spacing evened out."""
    text = without_code(path.read_text(encoding="utf-8"))
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"<a id=\"[^\"]+\"></a>", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # the words of a link, not its address
    text = re.sub(r"[*_`\[\]>|#]", " ", text)
    found = set()
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n\s*-\s", text):
        words = sentence.split()
        if len(words) >= SENTENCE_WORDS:
            found.add(" ".join(words).lower().rstrip(".:;"))
    return found


def test_no_sentence_of_the_readme_or_a_guide_is_repeated_on_another_page():
    seen: dict[str, Path] = {}
    repeated = []
    for path in PAGES:
        for sentence in sentences(path):
            if sentence in seen and seen[sentence] != path:
                repeated.append(
                    f"{seen[sentence].relative_to(ROOT)} and {path.relative_to(ROOT)}: {sentence!r}"
                )
            seen.setdefault(sentence, path)
    assert not repeated, "each fact lives on one page; link to it instead:\n" + "\n".join(repeated)


def test_the_duplicate_check_finds_a_paragraph_copied_into_another_page(tmp_path):
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("# One\n\nEach lesson opens with a picture of its data flow.\n")
    two.write_text("# Two\n\nAs said: each lesson opens with a picture of its data flow.\n")
    assert sentences(one) & sentences(two) == {"each lesson opens with a picture of its data flow"}
