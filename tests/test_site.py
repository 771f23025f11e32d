"""The course's website, opened in headless Chromium as a reader would open it.

Run after `make site` (or `course site build`): `make test-site`. The pages are served
from _build/site/html on localhost; Chromium and its driver are Debian's packages
(chromium, chromium-driver), driven by Selenium with an explicit driver path, so nothing
is downloaded. Screenshots of one lesson per language go to _build/site/screenshots/.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from course_helpers.languages import ALL, LANGUAGES
from course_tools.guides import GUIDES, TRANSLATED_GUIDES

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "site" / "html"
SCREENSHOTS = ROOT / "_build" / "site" / "screenshots"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
AXE = ROOT / "site" / "node_modules" / "axe-core" / "axe.min.js"
LESSONS = sorted(p.stem for p in (ROOT / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb"))
#: The guides on each language's site: all of them in English, the translated ones elsewhere.
ENGLISH_ONLY = [name for name in GUIDES if name not in TRANSLATED_GUIDES]


def guides_of(code: str) -> list[str]:
    return list(GUIDES) if code == "en" else list(TRANSLATED_GUIDES)


#: What a lesson page may weigh without its videos: HTML, images, styles and scripts.
PAGE_LIMIT_MB = 4.0


def missing() -> str | None:
    if not (HTML / "index.html").exists():
        return f"{HTML} has no site: run `make site` first"
    for tool in (CHROMIUM, CHROMEDRIVER, AXE):
        if not tool.exists():
            return f"{tool} is missing (apt-get install chromium chromium-driver; npm ci --prefix site)"
    return None


if missing() and os.environ.get("COURSE_SITE_REQUIRED"):
    raise RuntimeError(missing())
pytestmark = [pytest.mark.site, pytest.mark.skipif(missing() is not None, reason=str(missing()))]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # Without the background-networking flags, Chromium tries Google's hosts, which this
    # closed network refuses; as root it needs --no-sandbox.
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1600",
        "--autoplay-policy=no-user-gesture-required",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        if tag == "a" and found.get("href"):
            self.hrefs.append(found["href"] or "")


def parsed(path: Path) -> _Links:
    links = _Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def pages() -> list[Path]:
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts)


def test_every_language_has_the_home_page_and_every_lesson():
    for code in LANGUAGES:
        for page in ("index", *LESSONS, *guides_of(code)):
            assert (HTML / code / f"{page}.html").exists(), f"{code}/{page}.html"


def test_every_internal_link_leads_to_a_page_and_an_anchor_that_exist():
    for page in pages():
        for href in parsed(page).hrefs:
            target = urlparse(href)
            if target.scheme or href.startswith(("mailto:", "//")):
                continue
            path = (page.parent / unquote(target.path)).resolve() if target.path else page
            if path.is_dir():
                path = path / "index.html"
            assert path.exists(), f"{page.relative_to(HTML)} links to {href}, which is missing"
            if target.fragment and path.suffix == ".html":
                assert target.fragment in parsed(path).ids, (
                    f"{page.relative_to(HTML)} links to {href}: no such anchor"
                )


def test_the_launch_buttons_open_this_languages_notebook():
    for code in LANGUAGES:
        for lesson in LESSONS:
            html = (HTML / code / f"{lesson}.html").read_text(encoding="utf-8")
            notebook = f"notebooks/{code}/{lesson}.ipynb"
            assert (
                f"https://colab.research.google.com/github/tf-agents-course/lessons/blob/main/{notebook}"
                in html
            )
            assert (
                f"https://mybinder.org/v2/gh/tf-agents-course/lessons/main?urlpath=lab/tree/{notebook}"
                in html
            )


class _InterfaceTexts(HTMLParser):
    """A page's texts outside the lesson: the themes' navigation, buttons and labels.

    Skipped: the article (the lesson, translated by the course's catalogs), the on-page
    table of contents (its headings), code, scripts and styles.
    """

    SKIPPED = ("article", "code", "script", "style")
    LABELS = ("aria-label", "title", "placeholder", "alt")

    def __init__(self) -> None:
        super().__init__()
        self.texts: set[str] = set()
        self._skipping: tuple[str, int] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if self._skipping:
            name, depth = self._skipping
            self._skipping = (name, depth + (tag == name))
            if name == "article":  # the theme's labels inside it: "Link to this heading"
                self.texts.update((found.get(k) or "").strip() for k in ("title", "aria-label"))
            return
        if tag in self.SKIPPED or "toc-entry" in (found.get("class") or ""):
            self._skipping = (tag, 1)
        self.texts.update((found.get(k) or "").strip() for k in self.LABELS if found.get(k))

    def handle_endtag(self, tag: str) -> None:
        if self._skipping and tag == self._skipping[0]:
            depth = self._skipping[1] - 1
            self._skipping = (tag, depth) if depth else None

    def handle_data(self, data: str) -> None:
        if not self._skipping and data.strip():
            self.texts.add(data.strip())


#: Interface texts that read the same in English and in a translation: names, keys, and
#: words spelled alike. The theme writes "<name> logo" as the launch buttons' alternative
#: text; "logo" is the word in French, Spanish and Portuguese too.
SAME_IN_EVERY_LANGUAGE = {entry.name for entry in ALL} | {
    "Binder",
    "Colab",
    "Ctrl",
    "K",
    "Binder logo",
    "Colab logo",
}
SAME_WORD = {"fr": {"Index"}, "es": {"Error", "Video"}, "pt-br": set()}
#: Labels that no reader meets: sphinx-book-theme's table of contents for printing, whose
#: <nav aria-label="Page"> is hidden on screens (class onlyprint), and labels nothing on paper.
NEVER_SHOWN = {"Page"}


def interface_texts(path: Path) -> set[str]:
    parser = _InterfaceTexts()
    parser.feed(path.read_text(encoding="utf-8"))
    return {text for text in parser.texts if re.search(r"[A-Za-z]{2}", text)}


@pytest.mark.parametrize("code", [c for c in LANGUAGES if c != "en"])
def test_no_interface_text_of_a_translated_page_is_left_in_english(code):
    for english in sorted((HTML / "en").glob("*.html")):
        page = HTML / code / english.name
        if english.stem in ENGLISH_ONLY:
            continue  # a guide kept in English: the other sites link to the English page
        left = interface_texts(english) & interface_texts(page)
        left -= SAME_IN_EVERY_LANGUAGE | SAME_WORD[code] | NEVER_SHOWN
        left = {text for text in left if not text.startswith(".")}  # file types: .ipynb, .pdf
        assert not left, (
            f"{code}/{page.name} shows English interface texts {sorted(left)}: add them to "
            "THEME_TEXTS in src/course_tools/site.py and translate them in the helpers' catalogs"
        )


def lang_of(browser) -> str:
    return browser.find_element("tag name", "html").get_attribute("lang")


def expected_lang(code: str) -> str:
    return {"pt-br": "pt-BR"}.get(code, code)


@pytest.mark.parametrize("lesson", [*LESSONS, *TRANSLATED_GUIDES])
def test_the_language_switcher_leads_to_the_same_lesson_in_each_language(browser, server, lesson):
    for code in LANGUAGES:
        browser.get(urljoin(server, f"{code}/{lesson}.html"))
        assert lang_of(browser) == expected_lang(code)
        switcher = browser.find_element("css selector", "nav.course-languages")
        targets = {
            link.get_attribute("hreflang"): link.get_attribute("href")
            for link in switcher.find_elements("tag name", "a")
        }
        assert set(targets) == set(LANGUAGES)
        assert targets[code].endswith(f"/{code}/{lesson}.html")
    for code, link in targets.items():
        browser.get(link)
        assert lang_of(browser) == expected_lang(code)
        assert browser.current_url.endswith(f"/{code}/{lesson}.html")


@pytest.mark.parametrize("guide", ENGLISH_ONLY)
def test_an_english_only_guide_switches_to_each_languages_home_page(browser, server, guide):
    browser.get(urljoin(server, f"en/{guide}.html"))
    switcher = browser.find_element("css selector", "nav.course-languages")
    targets = {
        link.get_attribute("hreflang"): link.get_attribute("href")
        for link in switcher.find_elements("tag name", "a")
    }
    assert targets["en"].endswith(f"/en/{guide}.html")
    for code in LANGUAGES:
        if code != "en":
            assert targets[code].endswith(f"/{code}/index.html"), targets[code]


def test_each_translated_home_page_lists_the_english_guides_as_english():
    for code in LANGUAGES:
        if code == "en":
            continue
        home = (HTML / code / "index.html").read_text(encoding="utf-8")
        for guide in ENGLISH_ONLY:
            assert f'href="../en/{guide}.html" hreflang="en" lang="en"' in home, (code, guide)


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_lesson_page_renders_its_math_images_and_videos(browser, server, code):
    browser.get(urljoin(server, f"{code}/02_dqn_cartpole.html"))
    browser.implicitly_wait(0)
    # MathJax typesets after load; wait for its promise.
    browser.execute_async_script(
        "const done = arguments[0]; MathJax.startup.promise.then(() => done(true));"
    )
    assert len(browser.find_elements("css selector", "mjx-container")) >= 5
    assert not browser.find_elements("css selector", "mjx-merror")
    images = browser.execute_script(
        "return [...document.images].map(i => [i.src, i.complete && i.naturalWidth > 0, i.alt]);"
    )
    assert images, "no image on the page"
    for source, loaded, alt in images:
        assert loaded, f"{source} did not load"
        assert alt.strip(), f"{source} has no alternative text"
    videos = browser.find_elements("tag name", "video")
    assert videos
    for video in videos:
        assert video.get_attribute("preload") == "none"
        state = browser.execute_async_script(
            "const [video, done] = arguments; video.preload = 'metadata';"
            "video.addEventListener('loadedmetadata', () => done(video.readyState), {once: true});"
            "video.addEventListener('error', () => done(-1), {once: true}); video.load();",
            video,
        )
        assert state >= 1, f"a video on {code}/02_dqn_cartpole.html does not load"
    # The build's date, in the page's language.
    from babel.dates import get_month_names

    from course_helpers.languages import language

    updated = browser.find_element("css selector", "p.last-updated").text
    months = get_month_names("wide", locale=language(code).locale).values()
    assert any(month in updated for month in months), updated
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / f"{code}-02_dqn_cartpole.png"))


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_page_passes_axe_without_serious_violations(browser, server, code):
    for page in ("index", *LESSONS, *guides_of(code)):
        browser.get(urljoin(server, f"{code}/{page}.html"))
        serious = serious_violations(browser)
        assert not serious, f"{code}/{page}.html:\n" + "\n".join(serious)


def serious_violations(browser) -> list[str]:
    """axe-core's serious and critical violations on the open page, one line each."""
    browser.execute_script(AXE.read_text(encoding="utf-8"))
    result = browser.execute_async_script(
        "const done = arguments[0];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations));"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}; e.g. {v['nodes'][0]['html'][:120]}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def test_a_lesson_page_weighs_less_than_the_limit_without_its_videos():
    for code in LANGUAGES:
        for lesson in LESSONS:
            page = HTML / code / f"{lesson}.html"
            html = page.read_text(encoding="utf-8")
            assets = set(re.findall(r'(?:src|href)="([^"#?]+\.(?:css|js|png|svg|jpg))', html))
            size = page.stat().st_size + sum(
                (page.parent / a).stat().st_size for a in assets if (page.parent / a).exists()
            )
            assert size / 1e6 < PAGE_LIMIT_MB, f"{code}/{lesson}.html weighs {size / 1e6:.1f} MB"


def test_the_root_page_leads_to_every_language():
    links = parsed(HTML / "index.html").hrefs
    assert links == [f"{entry.code}/index.html" for entry in ALL]


def test_the_root_page_opens_the_readers_language(browser, server):
    browser.get(server)  # headless Chromium prefers en-US
    assert browser.current_url == urljoin(server, "en/index.html")
    browser.get(urljoin(server, "index.html#languages"))  # with a fragment, the list stays
    choose = "return courseLanguage(arguments[0]);"
    assert browser.execute_script(choose, ["fr-CA", "en"]) == "fr"
    assert browser.execute_script(choose, ["pt-PT"]) == "pt-br"
    assert browser.execute_script(choose, ["PT-BR"]) == "pt-br"
    assert browser.execute_script(choose, ["de-DE", "es-MX"]) == "es"
    assert browser.execute_script(choose, ["de", "ja"]) == "en"
    assert not serious_violations(browser)


@pytest.mark.parametrize("code", LANGUAGES)
def test_the_copy_buttons_speak_the_pages_language(browser, server, code):
    from course_helpers.i18n import translator

    browser.get(urljoin(server, f"{code}/01_replay_buffers.html"))
    buttons = browser.find_elements("css selector", "button.copybtn")
    assert buttons, "sphinx-copybutton made no button"
    assert {b.get_attribute("data-tooltip") for b in buttons} == {translator(code)("Copy")}


#: A word of lesson 1's title in each language (singular where the title has a plural).
SEARCH_WORDS = {"en": "buffer", "pt-br": "buffer", "es": "búfer", "fr": "tampon"}


@pytest.mark.parametrize("code", LANGUAGES)
def test_the_search_finds_a_lesson_in_the_pages_language(browser, server, code):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(urljoin(server, f"{code}/search.html?q={SEARCH_WORDS[code]}"))
    found = WebDriverWait(browser, 20).until(
        lambda b: [a.get_attribute("href") for a in b.find_elements("css selector", "ul.search a")]
    )
    assert any(link.split("#")[0].endswith(f"/{code}/01_replay_buffers.html") for link in found), (
        found
    )


def test_no_page_loads_anything_from_another_host():
    """Scripts, styles, pictures, videos and fonts all ship with the site (offline, private)."""
    resource = re.compile(
        r'<(?:script|img|video|source|iframe)\b[^>]*\bsrc="(https?:)?//[^"]*"'
        r'|<link\b[^>]*\brel="(?:stylesheet|preload|icon)"[^>]*\bhref="(https?:)?//[^"]*"'
    )
    for page in pages():
        found = [m.group(0)[:160] for m in resource.finditer(page.read_text(encoding="utf-8"))]
        assert not found, f"{page.relative_to(HTML)} loads from another host: {found}"
