"""The evaluation process (SUPPORTGATE_EVALUATION_PROCESS, the service's default) against its
plain path, the in-process engine: the same answers, and the faults it must survive."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from supportgate.config import Settings
from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import decode_manifest
from supportgate.policy import EmbeddedEngine, PolicyBundle, build_engine
from supportgate.policy.engine_process import CHILDREN, ProcessEngine
from supportgate.policy.inputs import PolicyInput

from ..engines import EXAMPLE_TIME, default_matrix, example_pools


@pytest.fixture
def process(policy_bundle: PolicyBundle) -> Iterator[ProcessEngine]:
    engine = ProcessEngine(policy_bundle)
    yield engine
    engine.close()


def _inputs(bundle: PolicyBundle, examples: Path) -> list[PolicyInput]:
    evaluator = Evaluator(EmbeddedEngine(bundle), default_matrix(bundle))
    pools = example_pools(examples)
    return [
        evaluator.policy_input(
            Subject(decode_manifest(path.read_bytes(), fmt="yaml")),
            evaluated_at=EXAMPLE_TIME,
            hardware=pools.get,
        )
        for path in sorted(examples.glob("*.yaml"))
    ]


def test_the_process_answers_as_the_in_process_engine_on_every_example(
    process: ProcessEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    matrix = default_matrix(policy_bundle)
    inputs = _inputs(policy_bundle, examples_dir)
    plain = EmbeddedEngine(policy_bundle)
    expected = [plain.evaluate(matrix, item) for item in inputs]
    assert len({result.verdict for result in expected}) == 3  # the examples cover each verdict
    assert [process.evaluate(matrix, item) for item in inputs] == expected
    with ThreadPoolExecutor(max_workers=8) as pool:  # requests in flight share the children
        many = list(
            pool.map(lambda i: process.evaluate(matrix, inputs[i % len(inputs)]), range(200))
        )
    assert many == [expected[i % len(inputs)] for i in range(200)]
    assert process.evaluate_many(matrix, inputs) == expected  # a sweep's batch, one exchange


def _running(engine: ProcessEngine) -> list[subprocess.Popen[bytes]]:
    return [child.process for child in engine._children if child.process is not None]


def test_a_child_that_ends_is_started_again(
    process: ProcessEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    matrix = default_matrix(policy_bundle)
    [first, *_] = _inputs(policy_bundle, examples_dir)
    answers = [process.evaluate(matrix, first) for _ in range(CHILDREN)]
    ended = _running(process)
    assert len(ended) == CHILDREN  # each child has answered once
    for child in ended:
        child.kill()
        child.wait()
    assert [process.evaluate(matrix, first) for _ in range(CHILDREN)] == answers
    assert len(_running(process)) == CHILDREN
    assert {child.pid for child in _running(process)}.isdisjoint(c.pid for c in ended)


def test_new_policies_are_compiled_in_the_child_and_broken_ones_refused(
    process: ProcessEngine, policy_bundle: PolicyBundle, examples_dir: Path, tmp_path: Path
) -> None:
    matrix = default_matrix(policy_bundle)
    [first, *_] = _inputs(policy_bundle, examples_dir)
    answer = process.evaluate(matrix, first)
    copy = tmp_path / "policies"
    shutil.copytree(policy_bundle.directory, copy)
    (copy / "supportgate" / "host" / "host.rego").write_text(
        "package supportgate.host\n\ndeny contains x if {\n"
    )
    process.use(PolicyBundle.load(copy), None)
    with pytest.raises(PolicyEngineUnavailable, match="do not compile"):
        process.evaluate(matrix, first)
    process.use(policy_bundle, None)  # the child lives on: the good policies answer again
    assert process.evaluate(matrix, first) == answer


def test_close_ends_the_children(policy_bundle: PolicyBundle, examples_dir: Path) -> None:
    engine = ProcessEngine(policy_bundle)
    [first, *_] = _inputs(policy_bundle, examples_dir)
    for _ in range(CHILDREN):
        engine.evaluate(default_matrix(policy_bundle), first)
    children = _running(engine)
    assert len(children) == CHILDREN
    engine.close()
    assert [child.returncode for child in children] == [0] * CHILDREN  # ended at end of input
    assert _running(engine) == []


def test_the_setting_chooses_the_engine(policy_bundle: PolicyBundle) -> None:
    on = build_engine(policy_bundle, Settings.from_env({}), None)
    off = Settings.from_env({"SUPPORTGATE_EVALUATION_PROCESS": "off"})
    assert isinstance(on, ProcessEngine)
    assert isinstance(build_engine(policy_bundle, off, None), EmbeddedEngine)
    with pytest.raises(UsageError) as refused:
        Settings.from_env({"SUPPORTGATE_EVALUATION_PROCESS": "yes"})
    assert refused.value.field == "SUPPORTGATE_EVALUATION_PROCESS"
