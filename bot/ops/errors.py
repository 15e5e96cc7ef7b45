"""The operators' listener's failure as `python -m bot` reports it, without the web server:
a bot with no `HTTP_PORT` never imports it (`bot/ops/server.py`)."""


class ListenFailed(Exception):
    """The listener cannot open its port; the message is one line for the operator."""
