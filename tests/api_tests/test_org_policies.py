"""Organisation policy bundles in the service (docs/organisation-policies.md): GET /v1/policy,
the bundle's rules in decisions on both engines, the bundle inside the signed OPA bundle, and
reloading: a bad bundle refused with the service kept on the last good revision, a changed
good bundle swept with cause `policy`."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.policy import PolicyBundle
from supportgate.policy.inputs import format_time
from supportgate.policy.live import OPA_ACTIVATION_BOUND
from supportgate.policy.opa_bundle import BundleSigner, build_bundle
from supportgate.policy.org_check import PolicyRefused

from ..api import Api, running_api
from ..clock import FakeClock
from ..integration.test_org_misbehaving import FRAGILE, POOL
from ..opa import default_matrix_document, running_opa, serving_bundle, shared_credentials
from ..receiver import running_receiver
from ..services import free_port
from ..waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
ACME = REPO / "examples" / "policies" / "acme"
ACME_FILE = "supportgate/org/acme/acme.rego"  # in the directory its package names
EXAMPLES = REPO / "examples" / "manifests"
ACME_RULES = {"org.acme.decode-replicas", "org.acme.rtx-production", "org.acme.quantization"}


def post(api: Api, name: str) -> dict[str, Any]:
    response = api.post_manifest(EXAMPLES / name)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def rules(decision: dict[str, Any]) -> set[str]:
    return {violation["rule"] for violation in decision["violations"]}


def policy(api: Api) -> dict[str, Any]:
    response = api.client.get("/v1/policy", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
def acme_api(migrated_db_url: str) -> Iterator[Api]:
    with running_api(migrated_db_url, policy_bundles=(ACME,)) as api:
        yield api


def test_get_policy_is_for_procurement(sqlite_api: Api) -> None:
    assert sqlite_api.client.get("/v1/policy").status_code == 401
    ci = sqlite_api.client.get("/v1/policy", headers=sqlite_api.headers("ci"))
    assert ci.status_code == 403
    document = policy(sqlite_api)
    assert document["revision"] == sqlite_api.runtime.engine.policy_revision
    assert document["bundles"] == []
    assert {rule["source"] for rule in document["rules"]} == {"builtin"}
    assert set(document["rules"][0]) == {"id", "severity", "title", "description", "source"}


def test_a_bundles_rules_are_in_the_policy_and_its_decisions(acme_api: Api) -> None:
    document = policy(acme_api)
    assert [bundle["name"] for bundle in document["bundles"]] == ["acme"]
    assert {rule["id"] for rule in document["rules"] if rule["source"] == "acme"} == ACME_RULES
    post(acme_api, "hw-b200-pool.yaml")
    decision = post(acme_api, "dep-b200-offline.yaml")
    assert (decision["verdict"], rules(decision)) == ("rejected", {"org.acme.decode-replicas"})
    assert decision["policy_revision"] == document["revision"]
    [violation] = decision["violations"]
    assert violation["severity"] == "deny"
    assert violation["path"] == "spec.topology.decode_gpus"


def test_an_org_rule_may_be_waived(acme_api: Api) -> None:
    waiver = acme_api.client.post(
        "/v1/waivers",
        json={
            "kind": "DeploymentManifest",
            "name": "v41-flash-b200-batch",
            "rule": "org.acme.decode-replicas",
            "justification": "the second domain arrives in January",
            "expires_at": format_time(acme_api.runtime.clock.now() + timedelta(days=30)),
        },
        headers=acme_api.headers("admin"),
    )
    assert waiver.status_code == 201, waiver.text
    post(acme_api, "hw-b200-pool.yaml")
    decision = post(acme_api, "dep-b200-offline.yaml")
    assert decision["verdict"] == "supported"
    assert [v["severity"] for v in decision["violations"]] == ["waived"]


# --- on OPA ----------------------------------------------------------------------------------


@pytest.fixture
def acme_opa_api(opa_binary: str, tmp_path: Path) -> Iterator[Api]:
    """The service with the bundle on an OPA that pulled the service's signed bundle (built
    by the service's code, so its revision is the one the service expects)."""
    credentials = shared_credentials()
    policies = PolicyBundle.load(DEFAULT_POLICY_DIR, (ACME,))
    signer = BundleSigner.from_file(credentials.signing_key)
    archive = build_bundle(policies, default_matrix_document(policies), signer).archive
    with (
        serving_bundle(credentials, archive) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
    ):
        wait_until(
            lambda: requests.get(f"{opa.url}/health?bundles", timeout=5).status_code == 200,
            "OPA to activate the bundle",
        )
        with running_api(
            f"sqlite:///{tmp_path / 'supportgate.db'}", opa_url=opa.url, policy_bundles=(ACME,)
        ) as api:
            yield api


@pytest.mark.opa
def test_opa_decides_with_the_bundles_rules(acme_opa_api: Api) -> None:
    assert acme_opa_api.runtime.engine.name == "opa"
    post(acme_opa_api, "hw-b200-pool.yaml")
    decision = post(acme_opa_api, "dep-b200-offline.yaml")
    assert (decision["verdict"], rules(decision)) == ("rejected", {"org.acme.decode-replicas"})


@pytest.mark.opa
def test_on_opa_a_changed_bundle_decides_once_opa_pulled_it(
    opa_binary: str, tmp_path: Path
) -> None:
    """OPA pulls the service's current bundle (here through a loopback server that hands out
    what the service serves): after a reload the service publishes the new revision, and takes
    it (the new rules decide) at the first tick that finds OPA holding it."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    credentials = shared_credentials()
    running: dict[str, Api] = {}

    def served() -> bytes:
        bundle = running["api"].runtime.bundles.bundle
        assert bundle is not None
        return bundle.archive

    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with (
        serving_bundle(credentials, served) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        running_api(url, clock=FakeClock(), opa_url=opa.url, policy_bundles=(copy,)) as api,
    ):
        running["api"] = api

        def decided() -> dict[str, Any] | None:  # None: 503, OPA lacks the revision
            response = api.post_manifest(EXAMPLES / "dep-b200-offline.yaml")
            return response.json() if response.status_code == 201 else None

        wait_until(
            lambda: api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 201,
            "OPA to hold the bundle",
        )
        assert rules(wait_until(decided, "a decision")) == {"org.acme.decode-replicas"}
        rules_file = copy / ACME_FILE
        text = rules_file.read_text().replace("decode < 2 * domain", "decode < domain / 2")
        rules_file.write_text(text)
        kept = policy(api)["revision"]

        def taken() -> str | None:
            api.runtime.sweeps.tick()
            revision: str = policy(api)["revision"]
            return revision if revision != kept else None

        revision = wait_until(taken, "OPA to pull the new revision")
        assert api.runtime.engine.policy_revision == revision
        decision = wait_until(decided, "a decision under it")
        assert (decision["policy_revision"], decision["verdict"]) == (revision, "supported")


TYPE_ERROR = """package supportgate.org.typed

# METADATA
# title: Typed
# description: regorus reaches count(1) only on a manifest of no kind; OPA's type checker
#   refuses it when it compiles the bundle.
# custom:
#   id: org.typed.count
#   severity: deny
deny contains {"rule": "org.typed.count", "message": "m", "path": "kind"} if {
	input.manifest.kind == "NoSuchKind"
	count(1) > 0
}
"""


@pytest.mark.opa
def test_on_opa_a_bundle_opa_refuses_never_takes_effect(opa_binary: str, tmp_path: Path) -> None:
    """It used to be served: OPA refused it and kept the old revision, the service expected
    the new one, and every decision was 503. With an `opa` beside the service, OPA's compiler
    judges the bundle before it is served: it is refused and decisions go on."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    credentials = shared_credentials()
    running: dict[str, Api] = {}

    def served() -> bytes:
        bundle = running["api"].runtime.bundles.bundle
        assert bundle is not None
        return bundle.archive

    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with (
        serving_bundle(credentials, served) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        running_api(url, clock=FakeClock(), opa_url=opa.url, policy_bundles=(copy,)) as api,
    ):
        running["api"] = api
        wait_until(
            lambda: api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 201,
            "OPA to hold the bundle",
        )
        kept = policy(api)["revision"]
        (copy / "typed.rego").write_text(TYPE_ERROR)
        api.runtime.sweeps.tick()
        [problem] = policy(api)["last_error"]["problems"]
        assert problem.startswith(f"{copy}/typed.rego:12: OPA refuses it: count")
        response = api.post_manifest(EXAMPLES / "dep-b200-offline.yaml")
        assert response.status_code == 201, response.text
        assert response.json()["policy_revision"] == kept


@pytest.fixture
def no_opa_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the Docker image: only the OPA server judges a bundle."""
    path = [entry for entry in os.environ["PATH"].split(os.pathsep) if entry]
    monkeypatch.setenv(
        "PATH", os.pathsep.join(entry for entry in path if not (Path(entry) / "opa").exists())
    )
    assert shutil.which("opa") is None


@pytest.mark.opa
@pytest.mark.usefixtures("no_opa_on_path")
def test_without_opa_beside_the_service_a_bundle_opa_refuses_is_withdrawn(
    opa_binary: str, tmp_path: Path
) -> None:
    """No `opa` on the service's PATH (the Docker image has none), so only OPA judges the
    bundle. It used to be served and expected: OPA kept its old revision and every decision
    was 503. Now it is taken only once OPA holds it; OPA never does, and after
    OPA_ACTIVATION_BOUND the service serves the last good bundle again and refuses it."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    running: dict[str, Api] = {}
    served_revisions: list[str] = []

    def served() -> bytes:
        bundle = running["api"].runtime.bundles.bundle
        assert bundle is not None
        served_revisions.append(bundle.revision)
        return bundle.archive

    clock = FakeClock()
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with (
        serving_bundle(shared_credentials(), served) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        running_api(url, clock=clock, opa_url=opa.url, policy_bundles=(copy,)) as api,
    ):
        running["api"] = api
        wait_until(
            lambda: api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 201,
            "OPA to hold the bundle",
        )
        kept = policy(api)["revision"]
        good = api.runtime.bundles.bundle
        assert good is not None
        (copy / "typed.rego").write_text(TYPE_ERROR)
        assert not api.runtime.policies.reload()
        published = api.runtime.bundles.bundle
        assert published is not None
        assert published.revision != good.revision
        # OPA fetched the new bundle, and fetched again after it had refused it.
        wait_until(
            lambda: (
                served_revisions[served_revisions.index(published.revision) + 1 :]
                if published.revision in served_revisions
                else None
            ),
            "OPA to fetch the new bundle twice",
        )
        assert not api.runtime.policies.reload()  # not held, and within the bound
        assert post(api, "dep-b200-offline.yaml")["policy_revision"] == kept
        failures = reload_failures(api)
        clock.advance(OPA_ACTIVATION_BOUND)
        assert not api.runtime.policies.reload()
        assert reload_failures(api) == failures + 1
        again = api.runtime.bundles.bundle
        assert again is not None
        assert again.revision == good.revision
        error = policy(api)["last_error"]
        assert error["kept"] == kept
        [problem] = error["problems"]
        assert f"OPA did not activate bundle revision {published.revision}" in problem
        assert policy(api)["revision"] == kept
        assert post(api, "dep-b200-offline.yaml")["policy_revision"] == kept
        assert not api.runtime.policies.reload()  # told once, not retried
        assert policy(api)["last_error"] == error


@pytest.mark.opa
@pytest.mark.usefixtures("no_opa_on_path")
def test_at_the_first_start_a_bundle_opa_refuses_falls_back_to_the_built_ins(
    opa_binary: str, tmp_path: Path
) -> None:
    """No last good bundle to keep: it used to be expected from the start, and every decision
    was 503 until the bundle was fixed. Now the built-in policies alone decide once
    OPA_ACTIVATION_BOUND passes without OPA holding it, and the refusal is told."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    (copy / "typed.rego").write_text(TYPE_ERROR)
    running: dict[str, Api] = {}

    def served() -> bytes:
        bundle = running["api"].runtime.bundles.bundle
        assert bundle is not None
        return bundle.archive

    clock = FakeClock()
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with (
        serving_bundle(shared_credentials(), served) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        running_api(url, clock=clock, opa_url=opa.url, policy_bundles=(copy,)) as api,
    ):
        running["api"] = api
        refused = policy(api)["revision"]
        assert api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 503
        assert not api.runtime.policies.reload()  # within the bound
        failures = reload_failures(api)
        with running_receiver() as receiver:
            subscribe = api.client.post(
                "/v1/webhooks", json={"url": receiver.url}, headers=api.headers("admin")
            )
            assert subscribe.status_code == 201, subscribe.text
            clock.advance(OPA_ACTIVATION_BOUND)
            assert api.runtime.policies.reload()  # the built-ins: a change to sweep for
            [told] = wait_until(receiver.received, "the policy.reload_failed delivery")
            event = json.loads(told.body)
        builtins = PolicyBundle.load(DEFAULT_POLICY_DIR).revision
        error = policy(api)["last_error"]
        assert (error["revision"], error["kept"]) == (refused, builtins)
        assert (event["type"], event["data"]["revision"]) == ("policy.reload_failed", refused)
        assert reload_failures(api) == failures + 1
        assert policy(api)["revision"] == builtins
        wait_until(
            lambda: api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 201,
            "OPA to hold the built-in bundle",
        )
        decision = post(api, "dep-b200-offline.yaml")
        assert (decision["policy_revision"], rules(decision)) == (builtins, set())


def test_at_the_first_start_an_opa_not_up_yet_is_waited_for(tmp_path: Path) -> None:
    """OPA that does not answer cannot have refused the bundle: the bound starts once it
    answers, so an OPA started after the service does not cost the organisation rules."""
    clock = FakeClock()
    with running_api(
        f"sqlite:///{tmp_path / 'supportgate.db'}",
        clock=clock,
        opa_url=f"http://127.0.0.1:{free_port()}",
        policy_bundles=(ACME,),
    ) as api:
        clock.advance(2 * OPA_ACTIVATION_BOUND)
        assert not api.runtime.policies.reload()
        assert policy(api)["last_error"] is None
        assert policy(api)["revision"] == PolicyBundle.load(DEFAULT_POLICY_DIR, (ACME,)).revision


@pytest.mark.opa
def test_a_bundle_withdrawn_while_opa_was_away_is_taken_once_opa_holds_it(
    opa_binary: str, tmp_path: Path
) -> None:
    """Two replicas, one OPA that stops polling during a reload: this replica withdraws the
    new bundle at its bound, the other (here the loopback server, once "OPA is back") serves
    it and OPA activates it. This replica then follows OPA instead of answering 503."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    credentials = shared_credentials()
    running: dict[str, Api] = {}
    other_replica: list[bytes] = []  # what OPA gets instead, once it is back

    def served() -> bytes:
        if other_replica:
            return other_replica[0]
        bundle = running["api"].runtime.bundles.bundle
        assert bundle is not None
        return bundle.archive

    clock = FakeClock()
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with (
        serving_bundle(credentials, served) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        running_api(url, clock=clock, opa_url=opa.url, policy_bundles=(copy,)) as api,
    ):
        running["api"] = api
        wait_until(
            lambda: api.post_manifest(EXAMPLES / "hw-b200-pool.yaml").status_code == 201,
            "OPA to hold the bundle",
        )
        kept = policy(api)["revision"]
        good = api.runtime.bundles.bundle
        assert good is not None
        other_replica.append(good.archive)  # OPA "away": it keeps getting the old bundle
        rules_file = copy / ACME_FILE
        rules_file.write_text(
            rules_file.read_text().replace("decode < 2 * domain", "decode < domain / 2")
        )
        assert not api.runtime.policies.reload()
        clock.advance(OPA_ACTIVATION_BOUND)
        assert not api.runtime.policies.reload()
        refused = policy(api)["last_error"]["revision"]
        policies = PolicyBundle.load(DEFAULT_POLICY_DIR, (copy,))
        assert refused == policies.revision
        signer = BundleSigner.from_file(credentials.signing_key)
        other_replica[0] = build_bundle(policies, default_matrix_document(policies), signer).archive
        wait_until(
            lambda: policy(api)["revision"] != kept or api.runtime.policies.reload(),
            "this replica to take what OPA holds",
        )
        assert policy(api)["revision"] == refused
        assert policy(api)["last_error"] is None
        decision = post(api, "dep-b200-offline.yaml")
        assert (decision["policy_revision"], decision["verdict"]) == (refused, "supported")


def test_the_signed_bundle_holds_the_org_modules_and_its_revision_covers_them(
    tmp_path: Path,
) -> None:
    credentials = shared_credentials()
    settings: dict[str, Any] = {
        "bundle_signing_key_file": credentials.signing_key,
        "bundle_token": credentials.bundle_token,
    }
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    with running_api(url, **settings) as plain:
        plain_revision = plain.runtime.bundles.bundle.revision  # type: ignore[union-attr]
    with running_api(
        f"sqlite:///{tmp_path / 'acme.db'}", policy_bundles=(ACME,), **settings
    ) as api:
        response = api.client.get(
            "/v1/bundles/supportgate.tar.gz",
            headers={"Authorization": f"Bearer {credentials.bundle_token}"},
        )
        assert response.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
            names = {member.name.lstrip("/") for member in archive.getmembers()}
        assert "org/acme/supportgate/org/acme/acme.rego" in names
        assert "org/acme/supportgate/org/acme/acme_test.rego" not in names
        assert response.headers["etag"] != f'"{plain_revision}"'


# --- reloading -------------------------------------------------------------------------------


@pytest.fixture
def reloading(migrated_db_url: str, tmp_path: Path) -> Iterator[tuple[Api, Path]]:
    """A service on a copy of the example bundle that the test edits; its ticks come from the
    test (a FakeClock; the scheduler's own ticks find nothing new to do)."""
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    with running_api(migrated_db_url, clock=FakeClock(), policy_bundles=(copy,)) as api:
        yield api, copy


def policy_sweeps(api: Api) -> list[str]:
    with api.runtime.db.connect() as connection:
        return [
            str(row[0])
            for row in connection.exec_driver_sql(
                "SELECT trigger FROM sweeps WHERE cause = 'policy'"
            )
        ]


def test_a_bad_bundle_is_refused_on_reload_and_the_last_good_revision_kept(
    reloading: tuple[Api, Path],
) -> None:
    api, bundle = reloading
    before = policy(api)
    rules_file = bundle / ACME_FILE
    rules_file.write_text(rules_file.read_text().replace("decode < 2 * domain", "decode < 2 *"))
    api.runtime.sweeps.tick()
    assert {**policy(api), "last_error": None} == before
    assert api.runtime.engine.policy_revision == before["revision"]
    post(api, "hw-b200-pool.yaml")
    decision = post(api, "dep-b200-offline.yaml")  # still decided, by the last good rules
    assert rules(decision) == {"org.acme.decode-replicas"}
    assert decision["policy_revision"] == before["revision"]
    assert policy_sweeps(api) == []


def reload_failures(api: Api) -> float:
    [line] = [
        line
        for line in api.client.get("/metrics").text.splitlines()
        if line.startswith("supportgate_policy_reload_failures_total ")
    ]
    return float(line.split()[1])


def test_a_refused_reload_is_shown_counted_and_told_once(reloading: tuple[Api, Path]) -> None:
    api, bundle = reloading
    kept = policy(api)["revision"]
    assert policy(api)["last_error"] is None
    with running_receiver() as receiver:
        subscribe = api.client.post(
            "/v1/webhooks", json={"url": receiver.url}, headers=api.headers("admin")
        )
        assert subscribe.status_code == 201, subscribe.text
        rules_file = bundle / ACME_FILE
        rules_file.write_text(rules_file.read_text().replace('"path": "spec.stage", ', ""))
        api.runtime.sweeps.tick()
        api.runtime.sweeps.tick()  # the same refused revision: told once
        error = policy(api)["last_error"]
        assert error["kept"] == kept
        assert error["revision"] != kept
        [problem] = error["problems"]
        assert problem.startswith(f"{rules_file}:")
        assert "a finding is {rule, message, path}" in problem
        assert reload_failures(api) == 1
        [told] = wait_until(receiver.received, "the policy.reload_failed delivery")
        event = json.loads(told.body)
        assert event["type"] == "policy.reload_failed"
        assert event["data"]["problems"] == error["problems"]
        assert event["data"]["kept"] == kept
    post(api, "hw-b200-pool.yaml")  # evaluation goes on under the last good revision
    assert post(api, "dep-b200-offline.yaml")["policy_revision"] == kept


def test_a_module_joining_the_decision_is_refused_on_reload(
    reloading: tuple[Api, Path],
) -> None:
    """The reproduced attack: a module of package supportgate.decision (its package line
    indented) adds entries to the waiver table, and every built-in deny reads as waived."""
    api, bundle = reloading
    (bundle / "waivers.rego").write_text(
        '  package supportgate.decision\n\n_waiver_ids[rule] := "forged" if {\n'
        '\tsome rule in {"support.unknown", "port.production", "manifest.hardware-ref"}\n}\n'
    )
    api.runtime.sweeps.tick()
    [problem] = policy(api)["last_error"]["problems"]
    assert problem.startswith(f"{bundle}/waivers.rego:1: package supportgate.decision is not")
    decision = post(api, "dep-h100-pool-b.yaml")  # names a pool nobody tracks
    assert decision["verdict"] == "rejected"
    assert all(violation["severity"] != "waived" for violation in decision["violations"])


ALWAYS = """package supportgate.org.always

# METADATA
# title: Always
# description: A warning on every manifest, with no condition on the input.
# custom:
#   id: org.always.named
#   severity: warn
warn contains {"rule": "org.always.named", "message": "always", "path": "metadata"} if {
	true
}
"""


def test_a_rule_without_an_input_condition_reloads(reloading: tuple[Api, Path]) -> None:
    """It crashed the reload's check (a TypeError at every tick of the scheduler)."""
    api, bundle = reloading
    before = policy(api)["revision"]
    (bundle / "always.rego").write_text(ALWAYS)
    api.runtime.sweeps.tick()
    after = policy(api)
    assert after["revision"] != before
    assert after["last_error"] is None
    post(api, "hw-b200-pool.yaml")
    assert "org.always.named" in rules(post(api, "dep-b200-offline.yaml"))


def test_a_bad_bundle_refuses_the_start_naming_file_and_line(
    migrated_db_url: str, tmp_path: Path
) -> None:
    bad = tmp_path / "spoof"
    bad.mkdir()
    (bad / "spoof.rego").write_text(
        '  package supportgate.decision\n\n_waiver_ids["support.unknown"] := "forged"\n'
    )
    with (
        pytest.raises(PolicyRefused) as refused,
        running_api(migrated_db_url, policy_bundles=(bad,)),
    ):
        pass
    assert refused.value.field == "SUPPORTGATE_POLICY_BUNDLES"
    assert f"{bad}/spoof.rego:1: package supportgate.decision is not" in str(refused.value)


def test_a_changed_bundle_starts_a_policy_sweep_under_the_new_rules(
    reloading: tuple[Api, Path],
) -> None:
    api, bundle = reloading
    post(api, "hw-b200-pool.yaml")
    assert rules(post(api, "dep-b200-offline.yaml")) == {"org.acme.decode-replicas"}
    before = policy(api)["revision"]
    rules_file = bundle / ACME_FILE  # a team relaxes its rule to half a domain
    rules_file.write_text(
        rules_file.read_text().replace("decode < 2 * domain", "decode < domain / 2")
    )
    api.runtime.sweeps.tick()
    after = policy(api)
    assert after["revision"] != before
    assert api.runtime.engine.policy_revision == after["revision"]
    [trigger] = wait_until(lambda: policy_sweeps(api), "the policy sweep")
    assert trigger.startswith(f"policy:{after['revision']}:")

    def reevaluated() -> dict[str, Any] | None:
        response = api.client.get(
            "/v1/manifests/DeploymentManifest/v41-flash-b200-batch",
            headers=api.headers("procurement"),
        )
        body: dict[str, Any] = response.json()["latest_decision"]
        return body if body["cause"] == "policy" else None

    decision = wait_until(reevaluated, "the deployment re-evaluated by the policy sweep")
    assert decision["policy_revision"] == after["revision"]
    assert decision["verdict"] == "supported"
    assert rules(decision) == set()


def test_a_rule_that_misbehaves_on_one_manifest_never_fails_its_post(
    reloading: tuple[Api, Path], tmp_path: Path
) -> None:
    """Both used to be 503 (the malformed finding, the failing helper), for every manifest
    since the decision reads every org rule; now each is decided on the built-in rules with a
    warn in the org rule's place."""
    api, bundle = reloading
    (bundle / "fragile.rego").write_text(FRAGILE)
    api.runtime.sweeps.tick()
    assert policy(api)["last_error"] is None
    assert any(rule["id"] == "org.fragile.helper" for rule in policy(api)["rules"])
    for name, rule in (("fragile-message", "org.fragile.message"), ("fragile-helper", "org")):
        document = yaml.safe_load(POOL.read_text())
        document["metadata"]["name"] = name
        document["spec"]["nodes"] = 50
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(document))
        response = api.post_manifest(tmp_path / f"{name}.yaml")
        assert response.status_code == 201, response.text
        decision = response.json()
        assert decision["verdict"] == "experimental"  # the built-in verdict of a 50-node H100 pool
        assert [v["severity"] for v in decision["violations"] if v["rule"] == rule] == ["warn"]
