"""What `paperwatch ingest` prints of a batch: a reader must tell what will alert."""

from bot.services.ingest import IngestResult


def test_the_summary_counts_each_kind_and_says_what_does_not_alert() -> None:
    result = IngestResult(new=("2411.00001", "2411.00002"), updated=("2401.00003",), unchanged=4)
    assert result.summary() == "2 new, 1 updated, 4 already stored"
    assert IngestResult(late=1).summary() == (
        "0 new, 0 updated, 0 already stored, 1 older paper first seen in a new version"
        " (stored, not alerted)"
    )
    assert (
        IngestResult(late=1_193)
        .summary()
        .endswith(", 1,193 older papers first seen in a new version (stored, not alerted)")
    )
