import io
import logging

from bot.logging_setup import RedactingFormatter, redact_also


def record(message, *args, exc_info=None):
    return logging.LogRecord("x", logging.ERROR, __file__, 1, message, args, exc_info)


def test_known_secrets_are_blanked_everywhere_in_the_line():
    formatter = RedactingFormatter("%(message)s", ["sk-secret-1234", "rag-key-5678"])
    line = formatter.format(record("key=%s other=%s", "sk-secret-1234", "rag-key-5678"))
    assert line == "key=*** other=***"


def test_secrets_in_tracebacks_are_blanked():
    formatter = RedactingFormatter("%(message)s", ["tok-abcdef"])
    try:
        raise ValueError("bad token tok-abcdef")
    except ValueError:
        import sys

        line = formatter.format(record("failed", exc_info=sys.exc_info()))
    assert "tok-abcdef" not in line and "bad token ***" in line


def test_telegram_token_in_request_urls_is_blanked_even_if_unknown():
    formatter = RedactingFormatter("%(message)s")
    line = formatter.format(record("POST https://api.telegram.org/bot123456:AAH-x_y/getMe"))
    assert line == "POST https://api.telegram.org/bot***/getMe"


def test_a_secret_learnt_while_running_is_redacted_from_then_on():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter("%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_also(["mcp-token-4242"])
        logging.getLogger("mcp.client").warning("POST with Bearer mcp-token-4242 refused")
    finally:
        root.removeHandler(handler)
    assert stream.getvalue() == "POST with Bearer *** refused\n"


def test_with_a_log_file_warnings_and_errors_go_there_and_never_to_stderr(tmp_path, capsys):
    import warnings

    from bot.logging_setup import setup_logging

    log_file = tmp_path / "bot.log"
    root = logging.getLogger()
    logging.captureWarnings(False)  # an earlier test may have left it on, over pytest's own
    try:
        setup_logging("INFO", [], log_file)
        logging.getLogger("bot.pipeline").error("[ToolLoop] LLM failed: HTTP 503")
        logging.getLogger("asyncio").warning("Task exception was never retrieved")
        warnings.warn("a library's deprecation", DeprecationWarning, stacklevel=1)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        logging.captureWarnings(False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    log = log_file.read_text()
    assert "LLM failed: HTTP 503" in log and "never retrieved" in log
    assert "a library's deprecation" in log
