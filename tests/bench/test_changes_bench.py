"""bench.changes' chains are well formed: what each question asks is said by its statement
alone, and times move forward."""

from __future__ import annotations

from bench.changes import _epoch, load


def test_each_chains_answers_are_said_by_their_statement_alone() -> None:
    for name, least in (("dev", 50), ("heldout", 50), ("fresh", 30), ("unseen", 40)):
        chains = load(name)
        assert len(chains) >= least
        for chain in chains:
            turns = chain["conversation"]
            assert [_epoch(t["ts"]) for t in turns] == sorted(_epoch(t["ts"]) for t in turns)
            said = [t["user"].lower() for t in turns if t["kind"] == "statement"]
            assert len(said) == len(chain["states"]) >= 2, chain["id"]
            assert any(a.lower() in said[-1] for a in chain["now"]["answer"]), chain["id"]
            assert not any(a.lower() in s for a in chain["now"]["answer"] for s in said[:-1])
            for then in chain["then"]:
                own = said[then["state"]]
                assert any(a.lower() in own for a in then["answer"]), chain["id"]
