"""``course site``: the course as a static website, one Sphinx build per language.

The pages show what a full run of each lesson shows. Lessons 1 and 2 are executed in
full by the build (a few minutes); lesson 3 trains for about half an hour, so its
executions are stored in ``site/executions/<language>/`` by ``course site execute`` and
refreshed on demand, each with the date, the machine and the time it took. Executed
copies never go back into ``notebooks/``.

For each language the build prepares a source folder (the executed lessons without the
badges cell, whose images live on other hosts and whose links the theme's launch buttons
replace; videos moved out of the page into files that load only when played; a home page
with the lesson table) and runs Sphinx on it with ``site/conf.py``. The result is
``_build/site/html/<language>/``, with a root page that leads to each language.
"""

from __future__ import annotations

import base64
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polib

from course_helpers.i18n import translator
from course_helpers.languages import ALL, LANGUAGES, language
from course_tools import guides, lessons, links
from course_tools.l10n import files

#: Alternative text of the lessons' pictures (the page's language comes from the helpers'
#: catalogs), by what a cell calls...
ALT_BY_CALL = {
    "course.diagrams.replay_buffer_flow(": (
        "Diagram: a driver plays the policy and its observers write each step into the "
        "replay buffer with add_batch; the buffer overwrites its oldest items when a segment "
        "is full, and hands items to training by sampling, as sequences of steps, or all at "
        "once; training gives the policy new weights, so the policy that writes keeps changing."
    ),
    "course.diagrams.dqn_loop(": (
        "Diagram of DQN's loop: the collect policy acts in CartPole, an observer writes the "
        "transitions into the Reverb replay buffer, and batches sampled uniformly feed a "
        "gradient step on the Q-network, which takes its targets from the target network "
        "and copies its weights into it from time to time."
    ),
    "course.diagrams.sac_actor_learner(": (
        "Diagram of SAC with the Actor-Learner API: the collect actor writes transitions into "
        "the Reverb table; the learner trains the critics, the actor and α on batches from it "
        "and updates the policy variables that both actors read; triggers save the policy at "
        "intervals."
    ),
    "course.diagrams.distributed_sac(": (
        "Diagram of distributed SAC: two collect jobs write pairs into the replay table of a "
        "Reverb server; the train job samples batches from it and pushes its weights into the "
        "server's variable container, from which the collect jobs and the evaluator pull "
        "them; each job is a process of its own."
    ),
    "course.plot_returns(": "Plot of the average return at each evaluation against the training step.",
    "course.plot_q_values(": "Plot of the Q-values against the training step.",
    "course.plot_q_against_returns(": (
        "Plot, step by step through one greedy episode, of the Q-value the network predicted "
        "and the discounted return that followed."
    ),
    "course.plot_policy_fit(": (
        "Plots, for two temperatures α, of the density exp(Q/α)/Z over a one-dimensional action "
        "whose Q-values have two peaks, and of the squashed normal actor fitted to it."
    ),
    "course.plot_sac_training(": (
        "Plots of SAC's temperature α, the policy's entropy and the losses against the "
        "training step."
    ),
}
#: ...or by lesson and cell, for a picture the environment renders.
ALT_BY_CELL = {
    (
        "02_dqn_cartpole",
        "render",
    ): "CartPole after a reset: a cart on a track, holding a pole upright.",
    ("03_sac_minitaur", "env-load"): "The Minitaur robot standing in pybullet after a reset.",
}

#: Interface texts that the themes leave in English in at least one of the course's
#: languages, by gettext domain: "sphinx" for the templates' texts (Sphinx's and
#: pydata-sphinx-theme's, and three labels that sphinx-book-theme writes in English, which
#: site/_templates passes to gettext), "booktheme" for the book theme's launch buttons.
#: They are translated in the helpers' catalogs, like every word a learner reads, and
#: reach Sphinx as catalogs of those domains that come before the themes' own
#: (:func:`interface`, site/conf.py). tests/test_site.py finds any text left over.
THEME_TEXTS: dict[str, tuple[str, ...]] = {
    "sphinx": (
        "Back to top",
        "Color mode",
        "Dark",
        "Light",
        "Link to this heading",
        "Main",
        "On this page",
        "Please activate JavaScript to enable the search functionality.",
        "Site navigation",
        "Skip to main content",
        "System Settings",
        "Toggle primary sidebar",
        "Toggle secondary sidebar",
        "Version warning",
        "next page",
        "previous page",
    ),
    "booktheme": ("Launch on", "Launch interactive content"),
}
#: sphinx-copybutton's texts, by its own keys. The extension carries them for a few
#: languages in its script, none for Brazilian Portuguese; a small script of the course
#: (:func:`interface`) gives it the course's, in every language.
COPY_BUTTON_TEXTS = {
    "copy": "Copy",
    "copy_to_clipboard": "Copy to clipboard",
    "copy_success": "Copied!",
    "copy_failure": "Failed to copy",
}

#: Lessons whose executions are stored rather than run by each build.
STORED = ("03_sac_minitaur", "04_distributed_sac")
#: The notebook metadata key of a stored execution's record.
RECORD_KEY = "course_site"
_ANCHOR = re.compile(r'^<a id="([\w-]+)"></a>$', re.M)
#: A Markdown link to an anchor of the same page: [words](#anchor).
_LOCAL_LINK = re.compile(r"\[([^\]]+)\]\(#([\w-]+)\)")
_VIDEO = re.compile(r'<video[^>]*>\s*<source src="data:video/mp4;base64,([A-Za-z0-9+/=\s]+)"')


@dataclass(frozen=True)
class Paths:
    """Where the site's inputs and outputs live, under the checkout ``root``."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "site"

    @property
    def executions(self) -> Path:
        return self.config / "executions"

    @property
    def build(self) -> Path:
        return self.root / "_build" / "site"

    @property
    def html(self) -> Path:
        return self.build / "html"


def machine() -> dict[str, Any]:
    """The machine that runs a lesson: processor, cores, Python."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        model = found.group(1).strip() if found else ""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "processor": model or platform.machine(),
        "cores": cores,
        "python": platform.python_version(),
    }


def unfinished_path(root: Path, code: str, lesson: str) -> Path:
    """Where :func:`execute` keeps a run until it has finished (and a failed run's copy)."""
    return Paths(root).build / "unfinished" / code / f"{lesson}.ipynb"


def execute(root: Path, lesson: str, code: str, output: Path, quick: bool = False) -> Path:
    """Run ``lesson`` in ``code``'s language, in full unless ``quick``; record when and where.

    The stored run at ``output`` is replaced only once the new run has finished: a run
    that fails or is stopped (an hour into lesson 3, say) leaves the stored run as it was,
    and its own partial copy in :func:`unfinished_path`, which the error names.
    """
    import nbformat

    start = time.perf_counter()
    unfinished = unfinished_path(root, code, lesson)
    unfinished.parent.mkdir(parents=True, exist_ok=True)
    lessons.run_lesson(lesson, code, output=unfinished, quick=quick, show_progress=False)
    notebook = nbformat.read(unfinished, as_version=4)
    notebook.metadata[RECORD_KEY] = {
        "executed": datetime.now(UTC).date().isoformat(),
        "machine": machine(),
        "minutes": round((time.perf_counter() - start) / 60, 1),
        "quick": quick,
    }
    files.write_all({output: nbformat.writes(notebook) + "\n"})
    unfinished.unlink()
    return output


def _record_of(path: Path) -> dict[str, Any]:
    """The execution record of an executed lesson, or {} if there is none."""
    if not path.exists():
        return {}
    metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    return dict(metadata.get(RECORD_KEY, {}))


def stored_path(paths: Paths, code: str, lesson: str) -> Path:
    return paths.executions / code / f"{lesson}.ipynb"


def _record_note(record: dict[str, Any], code: str) -> str:
    """The line above a lesson's outputs: when, where and how long it ran, in ``code``."""
    from babel.dates import format_date
    from babel.numbers import format_decimal

    _ = translator(code)
    locale = language(code).cldr_locale
    if record.get("quick"):
        note = _(
            "These outputs come from a quick-mode run of this notebook on {date} ({processor}, {cores} cores, Python {python}; "
            "{minutes} min): the training loops were shortened, so the agent is not trained."
        )
    else:
        note = _(
            "These outputs come from a full run of this notebook on {date} ({processor}, {cores} cores, Python {python}; "
            "{minutes} min)."
        )
    return note.format(
        date=format_date(date.fromisoformat(record["executed"]), format="long", locale=locale),
        **record["machine"],
        minutes=format_decimal(record["minutes"], format="0.0", locale=locale),
    )


def alt_text(lesson: str, cell: Any) -> str | None:
    """The English alternative text of the picture ``cell`` shows, if the site knows it."""
    if (lesson, cell.get("id")) in ALT_BY_CELL:
        return ALT_BY_CELL[lesson, cell.get("id")]
    return next((text for call, text in ALT_BY_CALL.items() if call in cell.source), None)


def prepare_notebook(
    source: Path, target: Path, code: str, videos: Path, prose: Path | None = None
) -> dict[str, Any]:
    """Copy an executed lesson for the site; returns its record (date, machine, minutes).

    ``prose``, the lesson as it is now (``notebooks/<language>/``), gives the text of every
    markdown cell that it has under the same id: a stored run keeps its outputs, and shows
    the lesson's current explanations, corrected since the run was made. Markdown does not
    run, so this changes no output.
    """
    import nbformat

    notebook = nbformat.read(source, as_version=4)
    record = notebook.metadata.get(RECORD_KEY)
    if record is None:
        raise ValueError(
            f"{source} has no {RECORD_KEY!r} record of when and where it ran; make it with "
            f"`course site execute {source.stem} --lang {code}`."
        )
    missing: set[str] = set()  # anchors of the lesson now that the stored run lacks
    if prose is not None:
        current = {
            cell.get("id"): cell.source
            for cell in nbformat.read(prose, as_version=4).cells
            if cell.cell_type == "markdown"
        }
        stored_ids = {cell.get("id") for cell in notebook.cells}
        missing = {
            found
            for cell_id, text in current.items()
            if cell_id not in stored_ids
            for found in _ANCHOR.findall(text)
        }
        for cell in notebook.cells:
            if cell.cell_type == "markdown" and cell.get("id") in current:
                cell.source = current[cell.get("id")]
    notebook.cells = [cell for cell in notebook.cells if cell.get("id") != lessons.BADGES_CELL]
    # A notebook's HTML anchors (<a id="why-fast"></a>), which its links point to, become
    # MyST targets, so that Sphinx resolves the links and checks them; Sphinx's targets
    # are site-wide, so each takes the lesson's name as a prefix.
    anchors = {
        found
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for found in _ANCHOR.findall(cell.source)
    }
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = _ANCHOR.sub(rf"({source.stem}-\1)=", cell.source)
            for anchor in anchors:
                cell.source = cell.source.replace(f"](#{anchor})", f"](#{source.stem}-{anchor})")
            # The current prose of a stored run may link to a section added to the lesson
            # since the run was made: the stored run has no such section, so the link's
            # words stay and the link goes (until `course site execute` runs it again).
            cell.source = _LOCAL_LINK.sub(
                lambda link: link.group(1) if link.group(2) in missing else link.group(0),
                cell.source,
            )
    _ = translator(code)
    count = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html")
            found = _VIDEO.search(html or "")
            if not found:
                continue
            count += 1
            name = f"{source.stem}-{cell.id}-{count}.mp4"
            videos.mkdir(parents=True, exist_ok=True)
            (videos / name).write_bytes(base64.b64decode(found.group(1)))
            label = _("Video of the trained agent")
            output["data"] = {
                "text/html": (
                    f'<video controls preload="none" width="480" aria-label="{label}">'
                    f'<source src="{videos.name}/{name}" type="video/mp4"></video>'
                )
            }
    _progress_bars_as_text(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code" and any(
            "image/png" in output.get("data", {}) for output in cell.get("outputs", [])
        ):
            alt = alt_text(source.stem, cell)
            if alt is None:
                raise ValueError(
                    f"{source}, cell {cell.id!r}: a picture without alternative text. Add its "
                    "description to ALT_BY_CALL or ALT_BY_CELL in src/course_tools/site.py, "
                    "and its translations to the helpers' catalogs."
                )
            cell.metadata.setdefault("mystnb", {})["image"] = {"alt": _(alt)}
    note = nbformat.v4.new_markdown_cell(f"*{_record_note(record, code)}*")
    note.id = "site-record"
    notebook.cells.insert(1, note)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return record


_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _progress_bars_as_text(notebook: Any) -> None:
    """Write each progress bar (a tqdm widget) as the line tqdm prints in a terminal.

    A page shows widgets only with ipywidgets' HTML manager and RequireJS, 2.9 MB of
    scripts that MyST-NB loads from two CDNs, for a few bars that no longer move. The
    notebook keeps each bar's last state, so the page shows that instead, as text:
    ``Training: 100%|██████████| 400/400 [00:07<00:00, 55.12it/s]``. A bar that tqdm
    hid when it closed (``leave=False``, such as an evaluation's) is left out, as in Jupyter.
    """
    import html

    widgets = notebook.metadata.pop("widgets", {})
    state = widgets.get(_WIDGET_STATE, {}).get("state", {})

    def model(reference: str) -> dict[str, Any]:
        return state.get(reference.removeprefix("IPY_MODEL_"), {}).get("state", {})

    def text(reference: str) -> str:  # tqdm pads its figures with figure spaces
        return html.unescape(model(reference).get("value") or "").replace("\u2007", " ")

    for cell in notebook.cells:
        kept = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(_WIDGET_VIEW)
            if view is None:
                kept.append(output)
                continue
            box = model(view["model_id"])
            layout = model(box.get("layout", ""))
            if layout.get("visibility") == "hidden" or layout.get("display") == "none":
                continue
            children = box.get("children", [])
            if len(children) == 3:  # tqdm's bar: description and percentage, bar, figures
                left, right = text(children[0]), text(children[2])
                # The percentage, as tqdm wrote it last; a bar without a total (frames
                # filmed) has none, and no bar.
                percent = re.search(r"(\d+)%$", left)
                filled = int(percent.group(1)) // 10 if percent else 0
                shown = f"|{'█' * filled}{' ' * (10 - filled)}|" if percent else ""
                output["data"] = {"text/plain": f"{left}{shown}{right}"}
            else:  # not a bar the course draws: keep its text form
                output["data"] = {"text/plain": output["data"].get("text/plain", "")}
            kept.append(output)
        if cell.cell_type == "code":
            cell.outputs = kept


_GUIDE_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def lesson_targets(sources: Path) -> set[str]:
    """The MyST targets of the lessons prepared in ``sources`` (see :func:`prepare_notebook`)."""
    found: set[str] = set()
    for path in sources.glob("*.ipynb"):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook.get("cells", []):
            if cell.get("cell_type") == "markdown":
                text = "".join(cell.get("source", ""))
                found.update(re.findall(r"^\(([\w-]+)\)=$", text, flags=re.M))
    return found


def guides_in(root: Path, code: str) -> list[str]:
    """The guides the site shows in ``code``'s language: all in English, the translated ones
    elsewhere (a guide left in English is linked from the English site)."""
    names = guides.GUIDES if code == "en" else guides.TRANSLATED_GUIDES
    return [name for name in names if guides.guide_path(root, name, code).exists()]


def guide_title(path: Path) -> str:
    """A guide's title: its first heading, without the #."""
    guide = guides.read_guide(path)
    return guide.cells[0].source.splitlines()[0].lstrip("#").strip()


def prepare_guide(
    root: Path, code: str, name: str, target: Path, targets: set[str] | None = None
) -> None:
    """Write ``docs/<code>/<name>.md`` as a page of the site in ``code``.

    The guide's anchors become MyST targets named after the guide (Sphinx's targets are
    site-wide), so links between guides, and into lessons, are resolved and checked by
    Sphinx. A lesson opens as this site's page of it; a guide that is not on this
    language's site opens on the English one; any other file of the repository opens on
    GitHub. ``targets`` holds the lessons' targets on this site (``02_dqn_cartpole-why-fast``):
    a link to a section that a stored run of its lesson lacks (added since the run was
    made) leads to the lesson's page instead, until ``course site execute`` runs it again.
    """
    repo = links.repository(root)
    assert repo is not None
    text = guides.guide_path(root, name, code).read_text(encoding="utf-8")
    text = re.sub(guides.ANCHOR.pattern, rf"({name}-\1)=", text, flags=re.M)
    here = guides_in(root, code)

    def link(match: re.Match[str]) -> str:
        words, address = match.group(1), match.group(2)
        path, _, anchor = address.partition("#")
        if "://" in address or address.startswith("mailto:"):
            return match.group(0)
        if not path:
            return f"[{words}](#{name}-{anchor})"
        if path.startswith(f"../../notebooks/{code}/") and path.endswith(".ipynb"):
            lesson = Path(path).stem
            if anchor and (targets is None or f"{lesson}-{anchor}" in targets):
                return f"[{words}](#{lesson}-{anchor})"
            return f"[{words}]({lesson}.ipynb)"
        guide = Path(path).stem if path.endswith(".md") and path.count("/") <= 2 else None
        if guide in here and path in (f"{guide}.md",):
            return f"[{words}](#{guide}-{anchor})" if anchor else f"[{words}]({guide}.md)"
        if guide in guides.GUIDES and path == f"../en/{guide}.md":
            href = f"../en/{guide}.html" + (f"#{guide}-{anchor}" if anchor else "")
            return f'<a href="{href}" hreflang="en">{words}</a>'
        if path.startswith("../../"):
            blob = f"https://github.com/{repo.owner}/{repo.name}/blob/{repo.branch}/{path[6:]}"
            return f"[{words}]({blob}{'#' + anchor if anchor else ''})"
        raise ValueError(
            f"docs/{code}/{name}.md: the link {address!r} leads nowhere the site knows. Link "
            "a section (#id), a guide (learners.md#id), a lesson "
            "(../../notebooks/en/NN_name.ipynb#id) or a file of the repository (../../path)."
        )

    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_GUIDE_LINK.sub(link, text), encoding="utf-8")


def home_page(code: str, titles: dict[str, str], guide_titles: dict[str, str] | None = None) -> str:
    """The home page: the course's title, a sentence, the lesson table and the guides.

    ``guide_titles`` maps each guide to its title; a guide whose page is not in this
    language's site (``../en/<name>.html``) is marked as English.
    """
    _ = translator(code)
    rows = "\n".join(f"| [{titles[name]}]({name}.ipynb) |" for name in titles)
    guide_titles = guide_titles or {}
    local = [name for name in guide_titles if not name.startswith("../")]
    items = []
    for name, title in guide_titles.items():
        if name.startswith("../"):
            english = _("(in English)")
            items.append(f'- <a href="{name}.html" hreflang="en" lang="en">{title}</a> {english}')
        else:
            items.append(f"- [{title}]({name}.md)")
    guide_list = f"## {_('Guides')}\n\n" + "\n".join(items) + "\n\n" if items else ""
    toctree = "\n".join([*titles, *local])
    return (
        f"# {_('Reinforcement learning with TF-Agents')}\n\n"
        f"{_('Each lesson is a notebook you can read here with the outputs of a real run, or open and run in Colab or Binder.')}\n\n"
        f"| {_('Lesson')} |\n| --- |\n{rows}\n\n"
        f"{guide_list}"
        f"```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{toctree}\n```\n"
    )


def settings(root: Path, code: str, static: Path, extra: Path, texts: Path) -> dict[str, Any]:
    repo = links.repository(root)
    assert repo is not None  # required: an incomplete setting raised
    _ = translator(code)
    return {
        "code": code,
        "locale": language(code).locale,
        "title": _("Reinforcement learning with TF-Agents"),
        "search_bar_text": _("Search..."),
        "repository_url": f"https://github.com/{repo.owner}/{repo.name}",
        "branch": repo.branch,
        "static": str(static),
        "extra": str(extra),
        "interface_locale": str(texts / "locale"),
        "interface_static": str(texts / "static"),
        "languages": {
            entry.code: {
                "name": entry.name,
                "label": _("Languages"),
                # The pages of that language's site: the switcher leads to the same page
                # where it exists there, to the home page otherwise (a guide in English only).
                "pages": ["index", *lessons.lesson_names(root=root), *guides_in(root, entry.code)],
            }
            for entry in ALL
        },
    }


def interface(code: str, folder: Path) -> Path:
    """Write the themes' texts in ``code`` into ``folder``, which is returned.

    ``locale/<locale>/LC_MESSAGES/<domain>.mo`` holds :data:`THEME_TEXTS` (polib writes
    the compiled catalogs that Sphinx's gettext reads); ``static/course-copybutton.js``
    holds :data:`COPY_BUTTON_TEXTS` for sphinx-copybutton.
    """
    _ = translator(code)
    shutil.rmtree(folder, ignore_errors=True)
    catalogs = folder / "locale" / language(code).locale / "LC_MESSAGES"
    catalogs.mkdir(parents=True)
    for domain, texts in THEME_TEXTS.items():
        catalog = polib.POFile()
        catalog.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
        catalog.extend(
            polib.POEntry(msgid=text, msgstr=_(text)) for text in texts if _(text) != text
        )
        catalog.save_as_mofile(str(catalogs / f"{domain}.mo"))
    (folder / "static").mkdir()
    copy_texts = json.dumps(
        {key: _(text) for key, text in COPY_BUTTON_TEXTS.items()}, ensure_ascii=False
    )
    (folder / "static" / "course-copybutton.js").write_text(
        "// sphinx-copybutton's texts in the page's language, from the course's catalogs\n"
        "// (COPY_BUTTON_TEXTS in src/course_tools/site.py). It runs after copybutton.js and\n"
        "// before the page has loaded, when the buttons are made; messages and locale are\n"
        "// copybutton.js's own top-level names.\n"
        f"messages[document.documentElement.lang] = {copy_texts};\n"
        "locale = document.documentElement.lang;\n",
        encoding="utf-8",
    )
    return folder


def mathjax(root: Path) -> Path:
    """MathJax's browser build, installed by npm from site/package-lock.json."""
    folder = root / "site" / "node_modules" / "mathjax" / "es5"
    if not (folder / "tex-chtml.js").exists():
        raise FileNotFoundError(
            f"{folder / 'tex-chtml.js'} is missing: run `npm ci --prefix site` (make site does)."
        )
    return folder


def build(
    root: Path, languages: list[str] | None = None, quick: bool = False, reuse: bool = False
) -> Path:
    """Build the site into ``_build/site/html``; returns the folder.

    ``reuse`` takes the lessons executed by the previous build (same mode) instead of
    running them again: for work on the site itself, not for publishing.
    """
    paths = Paths(root)
    chosen = languages or list(LANGUAGES)
    math = mathjax(root)
    static = paths.build / "static"
    shutil.rmtree(static, ignore_errors=True)
    # The one component the pages load (TeX input, HTML output) and its web fonts: 1.6 MB
    # of MathJax's 24.
    (static / "mathjax").mkdir(parents=True)
    shutil.copy2(math / "tex-chtml.js", static / "mathjax" / "tex-chtml.js")
    fonts = Path("output") / "chtml" / "fonts" / "woff-v2"
    shutil.copytree(math / fonts, static / "mathjax" / fonts)
    names = lessons.lesson_names(root=root)
    for code in chosen:
        sources = paths.build / "src" / code
        shutil.rmtree(sources, ignore_errors=True)
        extra = paths.build / "extra" / code
        shutil.rmtree(extra, ignore_errors=True)
        titles = {}
        for name in names:
            if name in STORED and not quick:
                executed = stored_path(paths, code, name)
                if not executed.exists():
                    raise FileNotFoundError(
                        f"{executed} is missing: lesson {name} is stored, not run by the build. "
                        f"Make it with `course site execute {name} --lang {code}` (about half "
                        "an hour), or build with --quick."
                    )
            else:
                executed = paths.build / "executed" / code / f"{name}.ipynb"
                if not (reuse and _record_of(executed).get("quick") == quick):
                    execute(root, name, code, executed, quick)
            current = root / "notebooks" / code / f"{name}.ipynb"
            prepare_notebook(
                executed,
                sources / f"{name}.ipynb",
                code,
                extra / "videos",
                prose=current if name in STORED and not quick else None,
            )
            titles[name] = links.lesson_title(
                lessons.read_lesson(root / "notebooks" / code / f"{name}.ipynb")
            )
        guide_titles = {}
        for guide in guides.GUIDES:
            if guide in guides_in(root, code):
                prepare_guide(root, code, guide, sources / f"{guide}.md", lesson_targets(sources))
                guide_titles[guide] = guide_title(guides.guide_path(root, guide, code))
            elif code != "en" and guides.guide_path(root, guide).exists():
                guide_titles[f"../en/{guide}"] = guide_title(guides.guide_path(root, guide))
        (sources / "index.md").write_text(home_page(code, titles, guide_titles), encoding="utf-8")
        extra.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(paths.html / code, ignore_errors=True)  # no page left from a past build
        environment = {
            **os.environ,
            "COURSE_SITE_SETTINGS": json.dumps(
                settings(
                    root, code, static, extra, interface(code, paths.build / "interface" / code)
                )
            ),
        }
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-q",
                "-b",
                "html",
                "-c",
                str(paths.config),
                str(sources),
                str(paths.html / code),
            ],
            check=True,
            env=environment,
        )
    (paths.html / "index.html").write_text(root_page(), encoding="utf-8")
    return paths.html


#: The root page's choice of language, in the reader's browser: the first of the browser's
#: preferred languages (``navigator.languages``) that the course has, by exact tag, then by
#: its primary subtag (``fr-CA`` → ``fr``, ``pt-PT`` → ``pt-br``); English otherwise.
#: Without JavaScript the page is the list of languages.
ROOT_SCRIPT = """
const codes = %s;
function courseLanguage(tags) {
  for (const tag of tags) {
    const wanted = String(tag).toLowerCase();
    const primary = wanted.split("-")[0];
    const found = codes.find(c => c === wanted) || codes.find(c => c.split("-")[0] === primary);
    if (found) return found;
  }
  return "en";
}
if (!location.hash) {
  location.replace(courseLanguage(navigator.languages || [navigator.language]) + "/index.html");
}
"""


def root_page() -> str:
    """The site's root: a link to each language, and a script that opens the reader's own."""
    items = "\n".join(
        f'    <li><a href="{entry.code}/index.html" lang="{entry.code}" hreflang="{entry.code}">{entry.name}</a></li>'
        for entry in ALL
    )
    title = translator("en")("Reinforcement learning with TF-Agents")
    script = ROOT_SCRIPT % json.dumps([entry.code for entry in ALL])
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n'
        '  <meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"  <title>{title}</title>\n  <script>{script}</script>\n</head>\n<body>\n"
        f"  <main>\n  <h1>{title}</h1>\n  <ul>\n{items}\n  </ul>\n  </main>\n</body>\n</html>\n"
    )
