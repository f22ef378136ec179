"""Standard Webhooks signatures against a published known answer, the secret format, the
retry delays, and which subscription URLs are accepted. No I/O."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from supportgate.errors import UsageError
from supportgate.webhooks import outbox, signing
from supportgate.webhooks.retries import DeliveryPolicy, retry_after_seconds, succeeded
from supportgate.webhooks.services import check_url
from supportgate.webhooks.targets import AllowList

pytestmark = pytest.mark.fast

# The known answer of the standard-webhooks reference library's tests (test_sign_function in
# libraries/python/tests/test_webhooks.py); the test below also recomputes it by hand.
KNOWN_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # noqa: S105 - a published test vector
KNOWN_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
KNOWN_TIMESTAMP = 1614265330
KNOWN_BODY = b'{"test": 2432232314}'
KNOWN_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_signature_matches_the_known_answer() -> None:
    assert signing.sign(KNOWN_SECRET, KNOWN_ID, KNOWN_TIMESTAMP, KNOWN_BODY) == KNOWN_SIGNATURE
    assert signing.headers(KNOWN_SECRET, KNOWN_ID, KNOWN_TIMESTAMP, KNOWN_BODY) == {
        "webhook-id": KNOWN_ID,
        "webhook-timestamp": "1614265330",
        "webhook-signature": KNOWN_SIGNATURE,
    }


def test_the_known_answer_is_hmac_sha256_of_id_timestamp_body() -> None:
    key = base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    signed = b"msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330." + KNOWN_BODY
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    assert "v1," + base64.b64encode(digest).decode() == KNOWN_SIGNATURE


@pytest.mark.parametrize(
    ("message_id", "timestamp", "body"),
    [
        ("msg_p5jXN8AQM9LWM0D4loKWxJeK", KNOWN_TIMESTAMP, KNOWN_BODY),
        (KNOWN_ID, KNOWN_TIMESTAMP + 1, KNOWN_BODY),
        (KNOWN_ID, KNOWN_TIMESTAMP, b'{"test": 2432232315}'),
    ],
)
def test_the_signature_covers_id_timestamp_and_body(
    message_id: str, timestamp: int, body: bytes
) -> None:
    assert signing.sign(KNOWN_SECRET, message_id, timestamp, body) != KNOWN_SIGNATURE


def test_new_secrets_are_whsec_base64_of_32_random_bytes() -> None:
    first, second = signing.new_secret(), signing.new_secret()
    assert first != second
    for secret in (first, second):
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
        assert signing.secret_key(secret) == base64.b64decode(secret[len("whsec_") :])


def test_a_secret_that_is_not_base64_is_refused() -> None:
    with pytest.raises(ValueError, match="whsec_"):
        signing.secret_key("whsec_not base64!")


def test_message_ids_are_stable_per_subscription_and_alert_and_have_no_dot() -> None:
    one = outbox.message_id("sub-1", "alert-1")
    assert one == outbox.message_id("sub-1", "alert-1")
    assert one.startswith("msg_")
    assert "." not in one
    assert len({one, outbox.message_id("sub-2", "alert-1"), outbox.message_id("sub-1", "a")}) == 3


def test_retry_delays_are_full_jitter_under_an_exponential_ceiling() -> None:
    policy = DeliveryPolicy(base_delay=5.0, max_delay=60.0)
    ceilings = [policy.retry_delay(n, uniform=lambda low, high: high) for n in range(1, 8)]
    assert ceilings == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0, 60.0]
    assert policy.retry_delay(3, uniform=lambda low, high: low) == 0.0
    assert policy.retry_delay(10_000, uniform=lambda low, high: high) == 60.0
    assert all(0.0 <= policy.retry_delay(4) <= 40.0 for _ in range(200))


def test_retry_after_is_honoured_up_to_the_ceiling() -> None:
    policy = DeliveryPolicy(base_delay=5.0, max_delay=60.0)
    assert policy.retry_delay(1, 30.0, uniform=lambda low, high: high) == 30.0
    assert policy.retry_delay(1, 3600.0, uniform=lambda low, high: high) == 60.0
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 GMT") is None
    assert retry_after_seconds(None) is None


def test_only_2xx_succeeds() -> None:
    assert [succeeded(code) for code in (200, 204, 299, 301, 410, 500, None)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]


def test_a_lease_shorter_than_a_request_is_refused() -> None:
    with pytest.raises(ValueError, match="lease_seconds"):
        DeliveryPolicy(request_timeout=30.0, lease_seconds=10.0)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/supportgate",
        "http://127.0.0.1:8080/hooks?token=abc",
        "HTTPS://example.com",
        "http://[::1]:9000/",
    ],
)
def test_http_and_https_urls_are_accepted(url: str) -> None:
    loopback = AllowList.parse(["127.0.0.0/8", "::1"])  # as the tests' receivers need
    assert check_url(url, loopback) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/hooks", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("javascript:alert(1)", "http or https"),
        ("example.com/hooks", "http or https"),
        ("https://", "host"),
        ("https:///path", "host"),
        ("https://exa mple.com", "spaces"),
        ("https://example.com/\x00", "control"),
        ("http://[::1/", "not a valid URL"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://example.com:0/", "port 0"),
        ("http://\u0080x/", "Invalid IDNA hostname"),
    ],
)
def test_other_urls_are_refused_naming_the_field(url: str, reason: str) -> None:
    with pytest.raises(UsageError, match=reason) as raised:
        check_url(url, AllowList())
    assert raised.value.field == "$.url"
    assert str(raised.value).startswith("$.url: ")
