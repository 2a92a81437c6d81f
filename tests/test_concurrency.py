"""Many writers on one brain file: processes and threads, no lost writes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM

WRITER = textwrap.dedent(
    """
    import sys, threading
    import memory_core as mc

    url, name, threads, per_thread = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    brain = mc.open_brain(mc.load_settings(), url=url)
    errors = []

    def work(t):
        try:
            for i in range(per_thread):
                mc.add_trace(brain, f"note {name} {t} {i} zebra{name}x{t}x{i}",
                             scope="thread", scope_id=name, identity=mc.SYSTEM)
        except Exception as e:
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("\\n".join(errors))
    sys.exit(1 if errors else 0)
    """
)


@pytest.mark.slow
def test_two_processes_of_four_threads_lose_no_write(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'brain.sqlite'}"
    processes, threads, per_thread = 2, 4, 5000
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, f"p{p}", str(threads), str(per_thread)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for p in range(processes)
    ]
    for p in procs:
        output, _ = p.communicate(timeout=600)
        assert p.returncode == 0, output
    brain = mc.open_brain(mc.load_settings(), url=url, create=False)
    with brain.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM memory_traces").scalar() == 40_000
        assert (
            conn.exec_driver_sql("SELECT count(*) FROM memory_traces_fts_docsize").scalar()
            == 40_000
        )
    for p in range(processes):
        hits = mc.search(
            brain, "note", scope_id=f"p{p}", limit=100, embedder=None, identity=SYSTEM
        ).results
        assert len(hits) == 100
        for t in (0, threads - 1):
            for i in (0, per_thread - 1):
                token = f"zebrap{p}x{t}x{i}"
                found = mc.search(brain, token, embedder=None, identity=SYSTEM).results
                assert [h.trace.content.split()[-1] for h in found] == [token]
    from memory_core.brain.maintenance import doctor

    assert doctor(brain) == []
