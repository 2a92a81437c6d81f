import pytest

from memory_core.language.phrases import third_person


@pytest.mark.parametrize(
    ("said", "retold"),
    [
        ("I'm researching adoption", "is researching adoption"),
        ("My mum visited", "their mum visited"),
        ("I love hiking with my dog", "loves hiking with their dog"),
        ("I currently take sumatriptan", "currently take sumatriptan"),
        ("I ought to call Dev", "ought to call Dev"),
        ("I met Priya in 2019", "met Priya in 2019"),
    ],
)
def test_a_statement_is_retold_of_its_speaker_with_adverbs_and_past_verbs_unchanged(
    said: str, retold: str
) -> None:
    assert third_person(said) == retold
