"""Why the embedded engine does not use regorus's VM (docs/policy-interface.md, "What a
decision costs").

gordon-to-regorus ships, beside the interpreter the service uses, a VM (`regorus.Program`,
`regorus.Rvm`) that runs the policy tree about 5x faster. It answers wrongly on ordinary Rego,
so decisions cannot rest on it. These tests hold the interpreter's answers beside the VM's;
should a new pin of the package fix the VM, they fail, and the choice is worth making again.
"""

from __future__ import annotations

import json

import pytest
import regorus

pytestmark = pytest.mark.fast

UNDEFINED = "<undefined>"  # what the VM answers for an undefined rule


def _interpreter(policy: str, rule: str, policy_input: object) -> object:
    engine = regorus.Engine()
    engine.add_policy("probe.rego", policy)
    engine.set_input_json(json.dumps(policy_input))
    return engine.eval_rule(rule)


def _vm(policy: str, rule: str, policy_input: object) -> object:
    program = regorus.Program.compile_from_modules("{}", [("probe.rego", policy)], [rule])
    vm = regorus.Rvm()
    vm.load_program(program)
    vm.set_data_json("{}")
    vm.set_input_json(json.dumps(policy_input))
    return json.loads(vm.execute())


def test_the_vm_does_not_fail_a_body_on_an_undefined_assignment() -> None:
    policy = "package probe\n\nx := 1 if {\n\ty := input.missing\n}\n"
    assert _interpreter(policy, "data.probe.x", {}) is None  # undefined: the body fails
    assert _vm(policy, "data.probe.x", {}) == 1


def test_the_vm_skips_an_else_after_a_failed_iteration() -> None:
    policy = (
        'package probe\n\nx := "first" if {\n\tsome item in input.items\n\titem == 1\n}'
        ' else := "second"\n'
    )
    assert _interpreter(policy, "data.probe.x", {"items": [2]}) == "second"
    assert _vm(policy, "data.probe.x", {"items": [2]}) == UNDEFINED


def test_the_vm_answers_undefined_where_the_interpreter_raises() -> None:
    policy = 'package probe\n\nx := to_number("not a number")\n'
    try:
        _interpreter(policy, "data.probe.x", {})
    except RuntimeError:
        pass
    else:
        raise AssertionError("the interpreter raised no error")
    assert _vm(policy, "data.probe.x", {}) == UNDEFINED
