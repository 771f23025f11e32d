"""What a learner reads under a translated lesson's cells, checked for English.

tests/conftest.py runs :func:`problems` on every cell nbval executes in a translated
lesson (quick mode), so a cell fails when its output shows

- a text of the helpers in English: a stretch of a helper message (between its ``{…}``
  fields) that the language's catalog translates, found verbatim in the output; or
- a number in English format: a decimal point in Portuguese or French, a comma between
  digits in Spanish.

Left out, as the issue allows: the log lines of TensorFlow, absl and Reverb (stderr), and
what Python prints as code (``repr`` of arrays, tensors, specs and time steps, shapes,
and lesson 4's listings of its jobs' source), which read the same in every language.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Where Python prints a value as code: a repr runs from its opening to its closing bracket,
# often over several lines (a spec with its minimum and maximum arrays).
_REPR_START = re.compile(
    r"\b(?:array|dtype|tf\.Tensor|(?:Bounded)?(?:Array|Tensor)Spec|TimeStep|Trajectory|"
    r"BufferInfo|ReplaySample|[A-Za-z_]*Tuple)\("
)
# Bracketed numbers (NumPy's print of an array, a shape in a TensorFlow message: [320,3]),
# objects' default reprs (<Figure size 640x480 with 1 Axes>) and file paths (two slashes or
# more: a rate such as step/s stays).
_NOT_PROSE = re.compile(r"\[[-\d\s.,e+\[\]]*\]|<[^<>\n]*>|(?:\S*/){2,}\S*")
# Versions and similar dotted names that are not numbers: Python 3.11.7, pybullet 3.2.6.
_VERSION = re.compile(
    r"\b(?:Python|TensorFlow|pybullet|Reverb|TF-Agents)\s+\d+(?:\.\d+)+|\d+\.\d+\.\d+"
)
# A number as printed: digits, with single marks (. or ,) between digits.
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*")
# A number each language may print (course.number's styles): Portuguese groups thousands
# with points and writes a decimal comma (1.055,12); French never uses a point; Spanish, as
# its glossary asks, never a comma.
_LOCAL_NUMBER = {
    "pt-br": re.compile(r"(?:[1-9]\d{0,2}(?:\.\d{3})+|\d+)(?:,\d+)?"),
    "fr": re.compile(r"\d+(?:,\d+)?"),
    "es": re.compile(r"\d+(?:\.\d+)?"),
}
_FIELD = re.compile(r"\{[^{}]*\}")


@cache
def english_fragments(language: str) -> tuple[str, ...]:
    """Stretches of the helpers' English messages that ``language``'s catalog translates:
    the text between fields, at least two words long, absent from the translation."""
    import polib

    path = ROOT / f"src/course_helpers/locale/{language}/LC_MESSAGES/course_helpers.po"
    found = set()
    for entry in polib.pofile(str(path)):
        if not entry.msgstr or entry.msgstr == entry.msgid:
            continue
        for stretch in _FIELD.split(entry.msgid):
            stretch = stretch.strip(" :;,.()\n")
            if len(stretch.split()) >= 2 and stretch not in entry.msgstr:
                found.add(stretch)
    # The units of a progress bar's rate are single words: look for them as "step/s".
    from course_helpers.progress import UNITS

    found.update(f"{unit}/s" for unit in UNITS if unit != "it")
    return tuple(sorted(found))


def shown_text(outputs: list) -> str:
    """The text a learner reads in a cell's outputs: printed text (not stderr) and the
    plain-text form of results and displays (a progress bar's, for one), minus code reprs."""
    pieces = []
    for output in outputs:
        if output.get("output_type") == "stream":
            if output.get("name") == "stdout":
                pieces.append(output.get("text", ""))
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data", {})
            if 'class="highlight"' in "".join(data.get("text/html", "")):
                continue  # a source listing (lesson 4's jobs): code, whose words the
                # listing's own test checks (tests/test_distributed_listing.py)
            pieces.append(data.get("text/plain", ""))
    text = "".join(piece if isinstance(piece, str) else "".join(piece) for piece in pieces)
    return _NOT_PROSE.sub(" ", _without_reprs(text))


def _without_reprs(text: str) -> str:
    """``text`` without the values Python printed as code (see :data:`_REPR_START`)."""
    while match := _REPR_START.search(text):
        depth, end = 0, len(text)
        for index in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        text = text[: match.start()] + " " + text[end:]
    return text


def problems(language: str, outputs: list) -> list[str]:
    """What is English in ``outputs`` of a cell of a lesson in ``language``."""
    text = shown_text(outputs)
    found = [
        f"English text from the helpers: {fragment!r}"
        for fragment in english_fragments(language)
        if fragment in text
    ]
    numbers = _NUMBER.findall(_VERSION.sub(" ", text))
    found += [
        f"a number in English format: {number!r}"
        for number in numbers
        if not _LOCAL_NUMBER[language].fullmatch(number)
    ]
    return found
