"""JupyterLab's defaults for learners: no news pop-up, the menus in the lesson's language."""

import json

import pytest

from course_tools import lab_settings

pytestmark = pytest.mark.unit

NEWS = "@jupyterlab/apputils-extension:notification"


def test_the_news_pop_up_is_turned_off_keeping_the_environments_other_overrides(tmp_path):
    environment, ours = tmp_path / "environment", tmp_path / "ours"
    environment.mkdir()
    (environment / "overrides.json").write_text(
        json.dumps(
            {
                "@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                NEWS: {"doNotDisturbMode": True},
            }
        )
    )
    written = json.loads(lab_settings.without_news(ours, based_on=environment).read_text())
    assert written == {
        "@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
        NEWS: {"doNotDisturbMode": True, "fetchNews": "false"},
    }
    assert json.loads((environment / "overrides.json").read_text())[NEWS] == {
        "doNotDisturbMode": True
    }  # the environment's file is left as it was


def test_an_overrides_file_that_is_not_json_is_reported_and_left_alone(tmp_path):
    (tmp_path / "overrides.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"overrides\.json is not valid JSON .*fix or remove it"):
        lab_settings.without_news(tmp_path)
    assert (tmp_path / "overrides.json").read_text() == "{not json"


@pytest.mark.parametrize(
    "code, locale", [("en", "en"), ("pt-br", "pt_BR"), ("es", "es_ES"), ("fr", "fr_FR")]
)
def test_each_course_language_sets_the_locale_of_its_language_pack(tmp_path, code, locale):
    lab_settings.set_language(tmp_path, code)
    written = json.loads((tmp_path / lab_settings.LANGUAGE_FILE).read_text())
    assert written == {lab_settings.LOCALE_PLUGIN: {"locale": locale}}


def test_an_unknown_language_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError):
        lab_settings.set_language(tmp_path, "de")
    assert not (tmp_path / lab_settings.LANGUAGE_FILE).exists()


def test_a_binder_link_sets_the_language_only_where_the_learner_has_not_chosen_one(tmp_path):
    assert lab_settings.set_user_language(tmp_path, "fr")
    path = tmp_path / lab_settings.USER_LANGUAGE_FILE
    assert (
        path.read_text().startswith(lab_settings.MARK) and '"locale": "fr_FR"' in path.read_text()
    )
    assert lab_settings.set_user_language(tmp_path, "pt-br")  # its own file: replaced
    assert '"locale": "pt_BR"' in path.read_text()
    path.write_text('{"locale": "es_ES"}')  # the learner's choice, saved by JupyterLab
    assert not lab_settings.set_user_language(tmp_path, "fr")
    assert path.read_text() == '{"locale": "es_ES"}'
