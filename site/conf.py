"""Sphinx's configuration for the course's website: one build per language.

`course site build` (src/course_tools/site.py) prepares each language's sources (the
executed lessons and a home page) and runs Sphinx with this folder as its configuration
folder, passing what differs between languages in COURSE_SITE_SETTINGS (JSON).
"""

import json
import os

settings = json.loads(os.environ["COURSE_SITE_SETTINGS"])

project = settings["title"]
language = settings["locale"]  # Sphinx's own interface texts and search stemmer
html_title = settings["title"]
# Sphinx writes the month in the page's language (through Babel).
html_last_updated_fmt = "%d %B %Y"
# "© Copyright 2026, <the title in the page's language>"; the licence is Apache-2.0.
copyright = f"2026, {settings['title']}"

extensions = ["myst_nb", "sphinx_copybutton"]
# The lessons arrive executed (src/course_tools/site.py); Sphinx only renders them.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
exclude_patterns = ["_build"]
# The translations already carry their typography (« », ’, no-break spaces); docutils'
# smart quotes would turn an apostrophe before **bold** into a closing quote.
smartquotes = False

html_theme = "sphinx_book_theme"
html_theme_options = {
    "repository_url": settings["repository_url"],
    "repository_branch": settings["branch"],
    # Launch buttons open this language's notebook: notebooks/<language>/<lesson>.ipynb.
    "path_to_docs": f"notebooks/{settings['code']}",
    "launch_buttons": {
        "colab_url": "https://colab.research.google.com",
        "binderhub_url": "https://mybinder.org",
        "notebook_interface": "jupyterlab",
    },
    "use_repository_button": True,
    "show_toc_level": 2,
    "search_bar_text": settings["search_bar_text"],
    # The search button lives in the sidebar; pydata-sphinx-theme would add a second one in
    # a header bar that the book theme otherwise leaves empty.
    "navbar_persistent": [],
    # The footer: copyright and the date of the build (no author line: the course has no
    # single author, and the theme would print "Author name not set").
    "footer_content_items": ["copyright.html", "last-updated.html"],
}
templates_path = ["_templates"]
html_sidebars = {
    "**": ["navbar-logo.html", "search-button-field.html", "sbt-sidebar-nav.html", "languages.html"]
}
html_context = {"course_languages": settings["languages"], "course_language": settings["code"]}
# MathJax ships with the site (npm's mathjax, copied by the build): equations render
# offline, and nothing is fetched from a CDN.
html_static_path = [settings["static"]]
mathjax_path = "mathjax/tex-chtml.js"
html_extra_path = [settings["extra"]]

# The themes' interface texts that they leave in English, from the helpers' catalogs
# (THEME_TEXTS in src/course_tools/site.py). A folder in locale_dirs comes before Sphinx's
# own catalogs for the templates' texts; the book theme's launch buttons have their own
# domain, registered here before the theme registers its catalog. sphinx-copybutton's
# texts come in a script of their own, loaded after the extension's.
locale_dirs = [settings["interface_locale"]]
html_static_path.append(settings["interface_static"])
html_js_files = ["course-copybutton.js"]


def setup(app):
    app.add_message_catalog("booktheme", settings["interface_locale"])
