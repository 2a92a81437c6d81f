"""Import/export throughput: a 100k-row CSV import and a 100k-trace JSON export.

Targets on the development machine: the CSV import under 60 s and the JSON
export under 20 s.  Both run on real SQLite brains in a temporary folder; the
CSV rows carry a type, a scope id, tags and a metadata object, so every
column path of the importer is exercised, and the JSON export is taken from
the brain the import filled (plus its rows' full-text index, written in the
same transactions).  ``doctor`` is run on the filled brain to show the index
is consistent after the import.

Run from the repository root::

    python -m bench.io --rows 100000 [--json /tmp/io.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import memory_core as mc
from memory_core.brain.maintenance import doctor
from memory_core.io import export_brain, import_into

WORDS = (
    "user prefers dark mode deploy docker compose tea coffee meeting ana bob project "
    "deadline python typescript release review budget travel paris berlin note idea"
).split()
TYPES = ("episodic", "semantic", "procedural")


def write_csv(path: Path, rows: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["content", "type", "scope_id", "tags", "metadata"])
        for i in range(rows):
            words = " ".join(rng.choice(WORDS) for _ in range(12))
            out.writerow(
                [
                    f"Fact {i}: {words}.",
                    TYPES[i % 3],
                    f"user-{i % 50}",
                    f"{rng.choice(WORDS)},{rng.choice(WORDS)}",
                    json.dumps({"row": i}),
                ]
            )


def run(rows: int) -> dict[str, float | int | bool]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = mc.load_settings(
            brain_url=f"sqlite:///{folder / 'brain.sqlite'}", data_dir=folder / "data"
        )
        brain = mc.open_brain(settings)
        source = folder / "in.csv"
        write_csv(source, rows)
        t0 = time.perf_counter()
        result = import_into(brain, "csv", source)
        csv_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        doc = export_brain(brain, "json", folder / "out.json")
        json_s = time.perf_counter() - t0
        problems = doctor(brain)
        brain.close()
        return {
            "rows": rows,
            "csv_imported": result.imported,
            "csv_errors": len(result.errors),
            "csv_import_s": round(csv_s, 2),
            "csv_rows_per_s": round(rows / csv_s),
            "json_exported": int(doc["traces"]),
            "json_export_s": round(json_s, 2),
            "json_bytes": (folder / "out.json").stat().st_size,
            "doctor_ok": not problems,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args(argv)
    figures = run(args.rows)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    ok = figures["csv_import_s"] < 60 and figures["json_export_s"] < 20 and figures["doctor_ok"]
    print("targets met" if ok else "TARGETS MISSED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
