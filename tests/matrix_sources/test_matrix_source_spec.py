"""SUPPORTGATE_MATRIX_SOURCE and SUPPORTGATE_MATRIX_POLL as the operator writes them: what each
form names, what is refused (naming the variable), and the source shown without secrets."""

from __future__ import annotations

import pytest

from supportgate.config import Settings
from supportgate.errors import UsageError
from supportgate.matrix_sources.spec import GitSource, HttpsSource, parse_source

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "git+https://git.example.com/policy.git#main:matrix/support.yaml",
            GitSource("https://git.example.com/policy.git", "main", "matrix/support.yaml"),
        ),
        (
            "git+/srv/policy.git#v2026.12:matrix.yaml",
            GitSource("/srv/policy.git", "v2026.12", "matrix.yaml"),
        ),
        (
            "git+git@git.example.com:org/policy.git#refs/heads/release:m.json",
            GitSource("git@git.example.com:org/policy.git", "refs/heads/release", "m.json"),
        ),
        ("git+file:///srv/a#b/c#main:x.yaml", GitSource("file:///srv/a#b/c", "main", "x.yaml")),
        (
            "https://vendor.example.com/matrix.yaml",
            HttpsSource("https://vendor.example.com/matrix.yaml"),
        ),
        (
            "https://bot:t0ken@[fd00::5]:8443/matrix.json",
            HttpsSource("https://bot:t0ken@[fd00::5]:8443/matrix.json"),
        ),
        (
            "git+ssh://git@10.1.2.3:2222/policy.git#main:m.yaml",
            GitSource("ssh://git@10.1.2.3:2222/policy.git", "main", "m.yaml"),
        ),
        (
            "git+file:///srv/policy.git#main:m.yaml",
            GitSource("file:///srv/policy.git", "main", "m.yaml"),
        ),
    ],
)
def test_each_form_names_its_source(text: str, expected: object) -> None:
    assert parse_source(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "http://vendor.example.com/matrix.yaml",  # not https
        "/srv/policy.git",  # neither form
        "git+/srv/policy.git",  # no ref, no file
        "git+/srv/policy.git#main",  # no file
        "git+#main:matrix.yaml",  # no repository
        "git+--upload-pack=touch /tmp/sg-hit#main:matrix.yaml",  # an option, not a repository
        "git+ext::sh -c touch% /tmp/sg-hit#main:matrix.yaml",  # the ext transport runs commands
        "git+/srv/policy.git#-main:matrix.yaml",  # a ref that is an option
        "git+/srv/policy.git#ma..in:matrix.yaml",  # not a ref name
        "git+/srv/policy.git#main:/etc/passwd",  # outside the repository
        "git+/srv/policy.git#main:../matrix.yaml",
        "https:///matrix.yaml",  # no host
        # A malformed host or port, once a raw traceback at start (or, in a git source, at
        # every poll, recorded nowhere):
        "https://[::1/matrix.yaml",
        "git+https://[::1/policy.git#main:matrix.yaml",
        "https://vendor.example.com:99999/matrix.yaml",
        "git+ssh://git.example.com:0x16/policy.git#main:matrix.yaml",
        "https://vendor example.com/matrix.yaml",
        "https://-vendor.example.com/matrix.yaml",
        "git+https://git.example.com%00/policy.git#main:matrix.yaml",
        "git+git@git example.com:org/policy.git#main:matrix.yaml",
        "git+https:///policy.git#main:matrix.yaml",
    ],
)
def test_a_bad_source_names_the_variable(text: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_source(text)
    assert refused.value.field == "SUPPORTGATE_MATRIX_SOURCE"


def test_the_source_is_shown_without_credentials() -> None:
    git = parse_source("git+https://bot:s3cret@git.example.com/p.git#main:m.yaml")
    assert git.shown == "git+https://git.example.com/p.git#main:m.yaml"
    token = parse_source("https://ghp_token@raw.example.com/m.yaml?token=abc")
    assert token.shown == "https://raw.example.com/m.yaml?<hidden>"
    scp = parse_source("git+git@host:org/p.git#main:m.yaml")
    assert scp.shown == "git+git@host:org/p.git#main:m.yaml"  # a user name, no secret


@pytest.mark.parametrize(
    ("value", "seconds"), [("", 300.0), ("5m", 300.0), ("30s", 30.0), ("1h", 3600.0), ("90", 90.0)]
)
def test_the_poll_interval(value: str, seconds: float) -> None:
    assert Settings.from_env({"SUPPORTGATE_MATRIX_POLL": value}).matrix_poll == seconds


@pytest.mark.parametrize("value", ["0", "-5m", "5x", "m", "nan", "infs", "25h"])
def test_a_bad_poll_interval_names_the_variable(value: str) -> None:
    with pytest.raises(UsageError) as refused:
        Settings.from_env({"SUPPORTGATE_MATRIX_POLL": value})
    assert refused.value.field == "SUPPORTGATE_MATRIX_POLL"
