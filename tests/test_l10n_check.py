"""course l10n check: the problems a maintainer must hear about, each named precisely."""

from __future__ import annotations

import nbformat
import pytest

from course_tools.l10n import build, catalogs, check
from test_l10n_build import CELLS, built, cell
from test_l10n_catalogs import LESSON, make_project, translate_everything, write_lesson


@pytest.fixture
def project(tmp_path):
    make_project(tmp_path, CELLS)
    translate_everything(tmp_path, "fr")
    build.build(tmp_path)
    return tmp_path


def set_translation(root, cell_id, text, language="fr"):
    path = catalogs.catalog_path(root, language, LESSON)
    catalog = catalogs.read_catalog(path)
    next(e for e in catalog if e.msgctxt == cell_id and e.msgid.startswith("Every")).msgstr = text
    catalogs.write_catalog(catalog, path)


def test_a_freshly_built_project_passes(project):
    assert check.check(project) == []


def test_a_notebook_older_than_its_catalog_is_out_of_date(project):
    set_translation(project, "api", "Tout tampon part d'un `data_spec`.")
    [problem] = check.check(project)
    assert problem.startswith("01_demo [fr]: notebooks/fr/01_demo.ipynb is out of date")
    assert "course l10n build" in problem


def test_a_translation_that_breaks_a_code_span_is_named_with_its_cell_and_line(project):
    set_translation(project, "api", "Tout tampon part d’un `data spec`.")
    [problem] = check.check(project)
    assert "01_demo [fr] cell 'api' (locales/fr/01_demo.po, line" in problem
    assert "lost code span '`data_spec`'" in problem and "added code span '`data spec`'" in problem


def test_build_refuses_a_broken_translation_with_checks_message_and_changes_no_file(project):
    set_translation(project, "api", "Tout tampon part d’un `data spec`.")
    notebooks = sorted((project / "notebooks").rglob("*.ipynb"))
    before = {p: p.read_bytes() for p in notebooks}
    with pytest.raises(catalogs.CatalogError) as error:
        build.build(project)
    assert check.check(project)[0] in str(error.value)
    assert "Nothing was built" in str(error.value)
    assert {p: p.read_bytes() for p in notebooks} == before
    assert not list(project.rglob("*.tmp"))


def test_a_changed_english_paragraph_whose_old_translation_lacks_its_new_code_span_passes(project):
    """The old translation becomes a fuzzy suggestion, which the build never uses: a
    maintainer's English change must not fail CI before a translator catches up."""
    write_lesson(
        project,
        [
            *CELLS[:3],
            (
                "api",
                "md",
                "## The API\n\nEvery buffer starts from a `data_spec` and a `max_length`.",
            ),
        ],
    )
    catalogs.extract(project)
    catalogs.update(project)
    build.build(project)
    [entry] = [
        e
        for e in catalogs.read_catalog(catalogs.catalog_path(project, "fr", LESSON))
        if e.msgctxt == "api" and e.msgid.startswith("Every")
    ]
    assert "fuzzy" in entry.flags and "`max_length`" not in entry.msgstr
    assert check.check(project) == []


def test_a_translation_that_changes_a_link_target_is_reported(project):
    write_lesson(
        project, [*CELLS, ("more", "md", "Every detail is in [the guide](https://example.org/rb).")]
    )
    catalogs.extract(project)
    catalogs.update(project)
    set_translation(project, "more", "Tout est dans [le guide](https://example.org/fr/rb).")
    assert any("lost link target '](https://example.org/rb)'" in p for p in check.check(project))


def test_a_code_cell_edited_in_a_localized_notebook_is_reported(project):
    path = project / "notebooks" / "fr" / f"{LESSON}.ipynb"
    notebook = nbformat.read(path, 4)
    next(c for c in notebook.cells if c.id == "train").source = "loss = agent.train(experience)"
    nbformat.write(notebook, path)
    problems = check.check(project)
    assert any(
        "cell 'train': this code cell differs from English in more than its comments, "
        "docstrings and displayed strings" in p
        for p in problems
    )


def test_translated_comments_in_code_do_not_count_as_a_difference():
    english = "loss = agent.train(experience).loss  # one gradient step"
    french = "loss = agent.train(experience).loss  # un pas de gradient"
    assert check.code_tokens(english) == check.code_tokens(french)
    assert check.code_tokens(english) != check.code_tokens(english.replace(".loss", ""))


def test_a_changed_magic_line_counts_as_a_code_difference():
    assert check.code_tokens("%time run()") != check.code_tokens("%timeit run()")
    assert check.code_tokens("!pip install x  # note") == check.code_tokens(
        "!pip install x  # note"
    )


def test_a_missing_localized_notebook_is_reported(project):
    (project / "notebooks" / "es" / f"{LESSON}.ipynb").unlink()
    assert check.check(project) == [
        "01_demo [es]: notebooks/es/01_demo.ipynb is missing; run 'course l10n build'."
    ]


def test_course_l10n_check_exits_1_listing_the_problems(project, monkeypatch, capsys):
    from course_tools import cli

    monkeypatch.chdir(project)
    assert cli.main(["l10n", "check"]) == 0
    set_translation(project, "api", "Tout tampon part d'un `data spec`.")
    assert cli.main(["l10n", "check"]) == 1
    assert "cell 'api'" in capsys.readouterr().err


def test_an_english_edit_followed_only_by_build_fails_check_naming_lesson_and_cell(project):
    """The translator's gate: a paragraph with no entry anywhere cannot pass."""
    write_lesson(project, [*CELLS, ("more", "md", "A paragraph nobody has extracted yet.")])
    build.build(project)
    problems = check.check(project)
    assert any(
        p.startswith("01_demo [template] cell 'more': locales/templates/01_demo.pot has no entry")
        and "run 'course l10n extract'" in p
        for p in problems
    )
    assert any(
        p.startswith("01_demo [fr] cell 'more': locales/fr/01_demo.po has no entry")
        and "run 'course l10n update'" in p
        for p in problems
    )
    catalogs.extract(project)
    assert not any("[template]" in p for p in check.check(project))
    catalogs.update(project)
    build.build(project)
    assert check.check(project) == []


def test_a_catalog_entry_whose_english_is_gone_fails_check_until_update(project):
    write_lesson(project, [c for c in CELLS if c[0] != "api"])
    catalogs.extract(project)
    build.build(project)
    problems = check.check(project)
    assert any(
        "[fr] cell 'api' (locales/fr/01_demo.po, line" in p and "no longer in notebooks/en" in p
        for p in problems
    )
    catalogs.update(project)
    assert check.check(project) == []


def test_translated_display_strings_and_comments_keep_the_code_identical(project):
    cells = [
        *CELLS,
        ("show", "code", 'steps = 3  # how far\nprint(f"loss after {steps} steps:", 0.5)'),
    ]
    write_lesson(project, cells)
    catalogs.extract(project)
    catalogs.update(project)
    path = catalogs.catalog_path(project, "fr", LESSON)
    catalog = catalogs.read_catalog(path)
    for entry in catalog:
        entry.msgstr = {
            "how far": "jusqu’où",
            "loss after {steps} steps:": "perte après {steps}\u00a0pas\u00a0:",
        }.get(entry.msgid, entry.msgstr)
    catalogs.write_catalog(catalog, path)
    build.build(project)
    shown = cell(built(project), "show").source
    assert shown == 'steps = 3  # jusqu’où\nprint(f"perte après {steps}\u00a0pas\u00a0:", 0.5)'
    assert check.check(project) == []


def test_a_display_string_translation_that_drops_a_field_or_breaks_the_literal_is_refused(project):
    write_lesson(
        project, [*CELLS, ("show", "code", 'steps = 3\nprint(f"loss after {steps} steps")')]
    )
    catalogs.extract(project)
    catalogs.update(project)
    build.build(project)
    path = catalogs.catalog_path(project, "fr", LESSON)
    for bad, words in (
        ("perte après les pas", "lost '{steps}'"),
        ('perte après {steps} "pas"', "not make a valid Python string"),
    ):
        catalog = catalogs.read_catalog(path)
        next(e for e in catalog if e.msgctxt == "show").msgstr = bad
        catalogs.write_catalog(catalog, path)
        [problem] = check.check(project)
        assert "01_demo [fr] cell 'show'" in problem and words in problem
        with pytest.raises(catalogs.CatalogError, match="Nothing was built"):
            build.build(project)


def test_code_changed_beyond_its_texts_is_reported_even_if_comments_match():
    english = 'print("items stored:", n)  # count'
    assert check.code_tokens(english) == check.code_tokens('print("ítems guardados:", n)  # cuenta')
    assert check.code_tokens(english) != check.code_tokens('print("items stored:", m)  # count')
    assert check.code_tokens('env = load("CartPole-v0")') != check.code_tokens(
        'env = load("CartPole-v1")'
    )


def test_french_typography_is_enforced_by_check_and_build(project):
    set_translation(project, "api", "Tout tampon part d’un `data_spec` : voyez ceci ; et cela ?")
    [problem] = check.check(project)
    assert (
        "typography: " in problem
        and "write a no-break space (U+00A0), not a plain space, before ':'" in problem
    )
    assert "narrow no-break space (U+202F), not a plain space, before ';'" in problem
    with pytest.raises(catalogs.CatalogError):
        build.build(project)
    set_translation(
        project, "api", "Tout tampon part d’un `data_spec`\u00a0: voyez ceci\u202f; et cela\u202f?"
    )
    build.build(project)
    assert check.check(project) == []


def test_the_helpers_catalogs_obey_the_same_rules(tmp_path):
    from course_tools.l10n import rules

    helper = tmp_path / "src/course_helpers/locale/es/LC_MESSAGES/course_helpers.po"
    helper.parent.mkdir(parents=True)
    helper.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "Ready ({where})."\nmsgstr "Listo (donde)."\n\n'
        'msgid "Why?"\nmsgstr "Por qué?"\n',
        encoding="utf-8",
    )
    problems = rules.helper_catalog_problems(tmp_path, "es")
    assert len(problems) == 2
    assert "lost placeholder '{where}'" in problems[0]
    assert "write '¿' where the phrase ending in '?' begins" in problems[1]


def test_the_words_of_text_in_math_may_be_translated_but_the_formula_may_not():
    from course_tools.l10n import rules

    english = r"The Q-values $Q_\theta(s, \text{left})$ and $Q_\theta(s, \text{right})$."
    french = r"Les valeurs Q $Q_\theta(s, \text{gauche})$ et $Q_\theta(s, \text{droite})$."
    assert rules.protected(english) == rules.protected(french)
    assert rules.protected(english) != rules.protected(french.replace(r"Q_\theta(s", r"Q_\phi(s"))


@pytest.mark.parametrize(
    "language, formula",
    [
        ("fr", r"$\sqrt{10\,000 \times 0{,}1 \times 0{,}9}$"),
        ("pt-br", r"$\sqrt{10.000 \times 0{,}1 \times 0{,}9}$"),
        ("es", r"$\sqrt{10\,000 \times 0.1 \times 0.9}$"),
        ("fr", r"$\sqrt{10{,}000 \times 0.1 \times 0.9}$"),  # left as in English
    ],
)
def test_a_formula_may_write_its_numbers_as_the_language_does(language, formula):
    from course_tools.l10n import rules

    english = rules.protected(r"About $\sqrt{10{,}000 \times 0.1 \times 0.9}$.")
    assert rules.protected(f"Environ {formula}.", language, english=english) == english


@pytest.mark.parametrize(
    "language, formula",
    [
        ("fr", r"$\sqrt{10\,000 \times 0{,}2 \times 0{,}9}$"),  # another number
        ("pt-br", r"$\sqrt{10{,}000 \times 0{,}1 \times 0{,}9}$"),  # 10,000 is ten in pt-br
        ("fr", r"$\sqrt{10\,000 \cdot 0{,}1 \times 0{,}9}$"),  # another operator
    ],
)
def test_a_formula_may_change_nothing_but_how_its_numbers_are_written(language, formula):
    from course_tools.l10n import rules

    english = rules.protected(r"About $\sqrt{10{,}000 \times 0.1 \times 0.9}$.")
    assert rules.protected(f"Environ {formula}.", language, english=english) != english


def test_a_text_fence_is_translated_whole_but_keeps_its_fence_lines(project):
    write_lesson(project, [*CELLS, ("flow", "md", "```text\nenvironment -> buffer\n```")])
    catalogs.extract(project)
    catalogs.update(project)
    path = catalogs.catalog_path(project, "fr", LESSON)
    for translation, ok in (
        ("```text\nenvironnement -> tampon\n```", True),
        ("```\nenvironnement -> tampon\n```", False),
    ):
        catalog = catalogs.read_catalog(path)
        next(e for e in catalog if e.msgctxt == "flow").msgstr = translation
        catalogs.write_catalog(catalog, path)
        if ok:
            build.build(project)
            assert cell(built(project), "flow").source == translation and check.check(project) == []
        else:
            [problem] = check.check(project)
            assert "must keep its fence lines '```text' and '```'" in problem
