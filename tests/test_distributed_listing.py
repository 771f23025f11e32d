"""Lesson 4 shows the jobs' source in the learner's language: words translated, code not."""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import tokenize

import pytest

from course_helpers import i18n
from course_helpers.distributed import JOBS, listing, show
from course_helpers.languages import TRANSLATED


def code_tokens(source: str) -> list[str]:
    """What runs: every token but comments, strings (docstrings among them) and layout."""
    skipped = {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE,
               tokenize.INDENT, tokenize.DEDENT}  # fmt: skip
    return [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type not in skipped
    ]


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("job", JOBS)
def test_a_translated_listing_runs_the_same_code_and_every_word_is_replaced(job):
    module = importlib.import_module(f"course_helpers.distributed.{job}")
    english = listing.texts(module)
    shown = listing.localized(module, translate=lambda text: f"«{text.upper()}»")
    ast.parse(shown)  # still Python
    assert code_tokens(shown) == code_tokens(inspect.getsource(module))
    for text in english:
        assert f"«{text.upper()}»" in " ".join(shown.replace("# ", " ").split()), text


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("job", JOBS)
def test_each_translated_listing_keeps_its_code_and_no_english_words(job, language):
    module = importlib.import_module(f"course_helpers.distributed.{job}")
    i18n.set_language(language)
    shown = show(job).data
    assert "def main() -> None:" in shown
    flat = " ".join(shown.replace("# ", " ").split())
    left = [text for text in listing.texts(module) if text in flat]
    assert not left, f"{job} in {language} still shows {left}"


def test_an_unknown_job_is_refused_with_the_jobs_names():
    with pytest.raises(ValueError, match="server, train, collect, evaluate"):
        show("learner")
