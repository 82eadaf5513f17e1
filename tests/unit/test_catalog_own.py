"""A deployment's own catalog (PAPERWATCH_CATALOG): instead of the bundled one, or laid over
it with `extends = "bundled"`; checked like the bundled one, its problems at its own lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.topics.catalog import CatalogError, load_catalog

OWN_TOPIC = """
[[topic]]
name = "Bananas in ML"
description = "Machine learning about bananas."
parent = "reinforcement-learning"
rule = 'banana* AND (learning OR model*)'
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_extending_adds_topics_replaces_by_slug_and_merges_the_glossary(tmp_path: Path) -> None:
    bundled = load_catalog()
    own = load_catalog(
        write(
            tmp_path,
            'extends = "bundled"\n\n[glossary]\nBML = "Bananas in ML"\n'
            + OWN_TOPIC
            + """
[[topic]]
name = "Diffusion Models"
rule = '"diffusion model" AND ti:diffusion'
""",
        )
    )
    assert len(own) == len(bundled) + 1
    assert [t.name for t in own.topics[:2]] == ["Bananas in ML", "Diffusion Models"]
    assert own.by_slug("diffusion-models").rule == '"diffusion model" AND ti:diffusion'
    assert own.by_slug("bananas-in-ml").parent == "reinforcement-learning"
    assert own.glossary["BML"] == "Bananas in ML"
    assert set(bundled.glossary.items()) <= set(own.glossary.items())


def test_without_extends_the_file_is_the_whole_catalog(tmp_path: Path) -> None:
    alone = OWN_TOPIC.replace('parent = "reinforcement-learning"\n', "")
    own = load_catalog(write(tmp_path, alone))
    assert [t.slug for t in own.topics] == ["bananas-in-ml"]


def test_problems_of_an_extending_file_name_its_own_lines(tmp_path: Path) -> None:
    text = 'extends = "bundled"\n' + OWN_TOPIC.replace("banana* AND", "banana* AND AND")
    with pytest.raises(CatalogError) as caught:
        load_catalog(write(tmp_path, text))
    message = str(caught.value)
    assert "Bananas in ML" in message and "line 7, column 21" in message  # its rule, here


def test_an_own_topic_may_not_hide_a_bundled_one_under_another_slug(tmp_path: Path) -> None:
    text = 'extends = "bundled"\n[[topic]]\nname = "LLM Agents"\nslug = "mine"\nrule = "agent"\n'
    with pytest.raises(CatalogError, match="LLM Agents"):
        load_catalog(write(tmp_path, text))


def test_only_the_bundled_catalog_can_be_extended(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match='extends may only be "bundled"'):
        load_catalog(write(tmp_path, 'extends = "/etc/other.toml"\n' + OWN_TOPIC))
