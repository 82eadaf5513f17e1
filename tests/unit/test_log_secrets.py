"""The log filter that keeps configured secrets out of every line and traceback."""

from __future__ import annotations

import io
import logging

from bot.log_secrets import RedactSecrets, keep_secret_bearing_loggers_quiet

SECRET = "123456:VERY-SECRET-token"


def logged(*args: object, exc: BaseException | None = None) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactSecrets([SECRET, "ab"]))
    logger = logging.getLogger("test.log_secrets")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        if exc is not None:
            try:
                raise exc
            except BaseException:
                logger.exception(*args)  # type: ignore[arg-type]
        else:
            logger.warning(*args)  # type: ignore[arg-type]
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_a_secret_in_the_message_or_its_arguments_is_redacted() -> None:
    text = logged("calling https://api.telegram.org/bot%s/getMe about a cab", SECRET)
    assert SECRET not in text and "bot[redacted]/getMe" in text
    assert "a cab" in text  # too short to be a secret: left alone


def test_a_secret_in_a_traceback_is_redacted() -> None:
    text = logged("failed", exc=RuntimeError(f"POST /bot{SECRET}/sendMessage refused"))
    assert "Traceback" in text and SECRET not in text


def test_secret_bearing_loggers_never_go_below_info() -> None:
    keep_secret_bearing_loggers_quiet(logging.DEBUG)
    for name in ("telegram", "telegram.ext.ExtBot", "httpx", "slack_sdk.web", "aiohttp.client"):
        assert not logging.getLogger(name).isEnabledFor(logging.DEBUG), name
