"""Settings: sources, precedence and refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

import memory_core as mc


def test_defaults_run_embedded_on_a_sqlite_brain_in_the_users_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REVERIE_HOME")
    monkeypatch.chdir(tmp_path)
    s = mc.load_settings()
    home = tmp_path / "xdg-data" / "reverie"
    assert (s.home, s.home_source) == (home, "user data")
    assert s.brain_url == f"sqlite:///{home / 'brain.sqlite'}"
    assert s.data_dir == home
    assert s.redis_url is None


def test_reverie_home_moves_the_brain_and_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_HOME", str(tmp_path / "elsewhere"))
    s = mc.load_settings()
    assert s.brain_url == f"sqlite:///{tmp_path / 'elsewhere' / 'brain.sqlite'}"
    assert (s.data_dir, s.home_source) == (tmp_path / "elsewhere", "home setting")
    # A brain URL or data folder set on its own still wins over the home.
    s = mc.load_settings(brain_url="sqlite:///x.sqlite", data_dir=tmp_path / "d")
    assert (s.brain_url, s.data_dir) == ("sqlite:///x.sqlite", tmp_path / "d")


def test_an_existing_reverie_data_folder_is_still_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REVERIE_HOME")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reverie-data").mkdir()
    s = mc.load_settings()
    assert (s.home, s.home_source) == (tmp_path / "reverie-data", "./reverie-data")
    assert s.brain_url == f"sqlite:///{tmp_path / 'reverie-data' / 'brain.sqlite'}"


def test_environment_overrides_the_toml_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "reverie.toml"
    config.write_text('brain_url = "sqlite:///from-toml.sqlite"\nsqlite_busy_timeout_ms = 1234\n')
    monkeypatch.setenv("REVERIE_CONFIG", str(config))
    assert mc.load_settings().brain_url == "sqlite:///from-toml.sqlite"
    assert mc.load_settings().sqlite_busy_timeout_ms == 1234
    monkeypatch.setenv("REVERIE_BRAIN_URL", "sqlite:///from-env.sqlite")
    assert mc.load_settings().brain_url == "sqlite:///from-env.sqlite"
    assert mc.load_settings(brain_url="sqlite:///x.sqlite").brain_url == "sqlite:///x.sqlite"


def test_unknown_environment_key_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_BRIAN_URL", "sqlite:///typo.sqlite")
    with pytest.raises(mc.ConfigError, match="REVERIE_BRIAN_URL"):
        mc.load_settings()


def test_unknown_toml_key_is_refused_by_name(tmp_path: Path) -> None:
    config = tmp_path / "reverie.toml"
    config.write_text('brian_url = "sqlite:///typo.sqlite"\n')
    with pytest.raises(mc.ConfigError, match="brian_url"):
        mc.load_settings(config_file=config)


def test_unknown_override_is_refused_by_name() -> None:
    with pytest.raises(mc.ConfigError, match="colour"):
        mc.load_settings(colour="teal")


def test_bad_values_and_files_are_config_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_SQLITE_BUSY_TIMEOUT_MS", "soon")
    with pytest.raises(mc.ConfigError, match="sqlite_busy_timeout_ms"):
        mc.load_settings()
    monkeypatch.delenv("REVERIE_SQLITE_BUSY_TIMEOUT_MS")
    with pytest.raises(mc.ConfigError, match="not found"):
        mc.load_settings(config_file=tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("brain_url = \n")
    with pytest.raises(mc.ConfigError, match="cannot read"):
        mc.load_settings(config_file=broken)
