"""The one place that reaches into python-telegram-bot's private modules (PTB 22.x).

- `RequestParameter` (`telegram.request._requestparameter`): the public `RequestData` is
  built only from `RequestParameter`s, which no public module exports. The journaled poller
  needs it to post getUpdates through PTB's own request object and keep Telegram's JSON
  unparsed for the inbox (`polling.py`): `Bot.get_updates` parses every update into an
  `Update`, and `Bot.do_api_request` warns for an endpoint that has a `Bot` method.

`tests/unit/test_telegram_ptb_compat.py` fails when an upgrade moves or changes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter


def request_data(parameters: Mapping[str, object]) -> RequestData:
    """A Bot API request's parameters, encoded as PTB encodes a `Bot` method's."""
    return RequestData([RequestParameter.from_input(k, v) for k, v in parameters.items()])
