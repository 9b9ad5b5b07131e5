"""The CI workflows (issue 19): no fork's code on the self-hosted GPU runner, the oldest Python
tested, the locks refreshed on a schedule and accepted by the suite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"

pytestmark = pytest.mark.site  # device-independent: the cpu leg only


def _load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_the_gpu_job_never_runs_code_from_a_pull_request_or_a_fork():
    ci = _load("ci.yml")
    gpu = ci["jobs"]["gpu"]
    assert "self-hosted" in gpu["runs-on"]
    condition = " ".join(gpu["if"].split())
    assert "pull_request" not in condition
    assert "!github.event.repository.fork" in condition
    assert "github.event_name == 'workflow_dispatch'" in condition
    assert "github.event_name == 'push' && github.ref == 'refs/heads/main'" in condition
    assert "github.actor == github.repository_owner" in condition
    # every other job runs on GitHub's own machines
    others = [job["runs-on"] for name, job in ci["jobs"].items() if name != "gpu"]
    assert others and all(r == "ubuntu-latest" for r in others)
    for name in ("docs.yml", "release.yml", "lock.yml"):
        jobs = _load(name)["jobs"].values()
        assert all("self-hosted" not in str(job.get("runs-on")) for job in jobs), name


def test_the_oldest_python_has_a_job():
    oldest = _load("ci.yml")["jobs"]["oldest"]
    steps = oldest["steps"]
    assert any(s.get("with", {}).get("python-version") == "3.10" for s in steps)
    assert any("make test-oldest" in s.get("run", "") for s in steps)


def test_the_locks_are_refreshed_weekly_and_proposed_only_after_the_suite_passes():
    lock = _load("lock.yml")
    assert lock["on"]["schedule"] and "workflow_dispatch" in lock["on"]
    runs = [s.get("run", "") for s in lock["jobs"]["refresh"]["steps"]]
    order = [i for i, r in enumerate(runs) if r.startswith(("make lock", "make test"))]
    assert [runs[i].split()[1] for i in order] == ["lock", "test"]
    assert any("gh pr create" in r for r in runs[order[-1] :])
    bot = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    assert {u["package-ecosystem"] for u in bot["updates"]} == {"npm", "github-actions"}
