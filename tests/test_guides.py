"""The guides in docs/: read by their anchors, translated through catalogs like the lessons."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_tools import guides
from course_tools.l10n import build, catalogs, check

GUIDE = """<a id="learners"></a>

# For learners

Open a lesson in [Colab](#colab) or read [lesson 2](../../notebooks/en/02_dqn_cartpole.ipynb#why-fast).

<a id="colab"></a>

## On Colab

The first cell installs what Colab lacks. Instructors read [their guide](instructors.md#grading).

```bash
make lab
```
"""


def write_guide(root: Path, text: str = GUIDE, name: str = "learners") -> Path:
    path = guides.guide_path(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path):
    (tmp_path / "notebooks" / "en").mkdir(parents=True)  # a course without lessons
    write_guide(tmp_path)
    catalogs.extract(tmp_path)
    catalogs.update(tmp_path, ["fr"])
    return tmp_path


def test_a_guide_is_cut_into_sections_at_its_anchor_lines_and_written_back_unchanged():
    guide = guides.parse(GUIDE, "learners.md")
    assert [cell.id for cell in guide.cells] == ["learners", "colab"]
    assert guide.cells[1].source.startswith("## On Colab\n\nThe first cell")
    assert guides.guide_text(guide) == GUIDE


def test_an_anchor_inside_a_code_block_is_text_not_a_section():
    text = '<a id="top"></a>\n\n# T\n\n```html\n<a id="inside"></a>\n```\n'
    assert [cell.id for cell in guides.parse(text, "t.md").cells] == ["top"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Title first\n", "line 1: text before the first anchor"),
        (
            '<a id="a"></a>\n\nx\n\n<a id="a"></a>\n\ny\n',
            "line 5: the anchor 'a' is already used on line 1",
        ),
        ('<a id="badges"></a>\n\nx\n', "reserved"),
        ('<a id="a"></a>\n\n```bash\nmake\n', "never closed"),
    ],
)
def test_a_malformed_guide_is_refused_with_its_file_and_line(text, message):
    with pytest.raises(guides.GuideError, match=message) as error:
        guides.parse(text, "docs/en/learners.md")
    assert "docs/en/learners.md" in str(error.value)


def test_extract_writes_one_entry_per_paragraph_keyed_by_section(project):
    template = catalogs.read_catalog(catalogs.template_path(project, "guide_learners"))
    keys = [(e.msgctxt, e.msgid.split("\n")[0][:20]) for e in template]
    assert keys == [
        ("learners", "# For learners"),
        ("learners", "Open a lesson in [Co"),
        ("colab", "## On Colab"),
        ("colab", "The first cell insta"),
    ]  # the bash block is code: copied, never translated


def translate(root: Path, skip: str = "") -> None:
    path = catalogs.catalog_path(root, "fr", "guide_learners")
    catalog = catalogs.read_catalog(path)
    for entry in catalog:
        if skip and entry.msgid.startswith(skip):
            continue
        entry.msgstr = entry.msgid.replace(
            "The first cell installs", "La première cellule installe"
        )
        entry.msgstr = entry.msgstr.replace("# For learners", "# Pour les apprenants")
    catalogs.write_catalog(catalog, path)


def test_the_built_guide_is_translated_and_its_links_lead_to_french_lessons_and_english_guides(
    project,
):
    translate(project)
    build.build(project, ["fr"])
    text = guides.guide_path(project, "learners", "fr").read_text(encoding="utf-8")
    assert text.startswith('<a id="learners"></a>\n\n# Pour les apprenants\n')
    assert "La première cellule installe" in text
    assert "](../../notebooks/fr/02_dqn_cartpole.ipynb#why-fast)" in text
    assert "](../en/instructors.md#grading)" in text  # not translated: the English guide
    assert "](#colab)" in text
    assert "```bash\nmake lab\n```" in text
    assert [p for p in check.check(project) if "[fr]" in p] == []


def test_an_untranslated_paragraph_shows_in_english_with_a_note_under_its_heading(project):
    translate(project, skip="The first cell")
    build.build(project, ["fr"])
    guide = guides.read_guide(guides.guide_path(project, "learners", "fr"))
    colab = guide.cells[1].source.split("\n\n")
    assert colab[0] == "## On Colab"
    assert colab[1].startswith("> *") and "anglais" in colab[1]
    assert colab[2].startswith("The first cell installs")


def test_check_names_a_stale_catalog_and_an_out_of_date_built_guide(project):
    translate(project)
    build.build(project, ["fr"])
    write_guide(project, GUIDE.replace("The first cell installs", "The first cell sets up"))
    problems = "\n".join(check.check(project))
    assert "has no entry for 'The first cell sets up" in problems
    assert "of docs/en/learners.md; run 'course l10n extract'" in problems
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    problems = "\n".join(check.check(project))
    assert "docs/fr/learners.md is out of date" in problems
    build.build(project, ["fr"])
    assert [p for p in check.check(project) if "[fr]" in p] == []


def test_a_guide_left_out_of_translation_has_no_catalog(project):
    write_guide(project, '<a id="instructors"></a>\n\n# For instructors\n', "instructors")
    catalogs.extract(project)
    assert not catalogs.template_path(project, "guide_instructors").exists()
