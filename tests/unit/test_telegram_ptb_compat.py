"""What the bot takes from python-telegram-bot beyond its public API (`ptb_compat.py`), and
the documented sentinel by which `AiohttpRequest` tells a time-out not given, instead of
PTB's private types: an upgrade that moves or changes either fails here, not in a poller
that stops fetching."""

import json

from telegram.request import BaseRequest, RequestData

from bot.adapters.telegram.ptb_compat import request_data


def test_request_data_encodes_parameters_as_a_bot_method_would():
    data = request_data({"offset": 43, "timeout": 10, "allowed_updates": ["message"]})

    assert isinstance(data, RequestData)
    assert not data.contains_files
    assert data.parameters == {"offset": 43, "timeout": 10, "allowed_updates": ["message"]}
    assert data.json_parameters == {
        "offset": "43",
        "timeout": "10",
        "allowed_updates": json.dumps(["message"]),
    }


class RecordingRequest(BaseRequest):
    """Answers every call with an empty result and notes the time-outs PTB passed."""

    def __init__(self) -> None:
        self.timeouts: list[tuple[object, ...]] = []

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def do_request(
        self,
        url,
        method,
        request_data=None,
        read_timeout=BaseRequest.DEFAULT_NONE,
        write_timeout=BaseRequest.DEFAULT_NONE,
        connect_timeout=BaseRequest.DEFAULT_NONE,
        pool_timeout=BaseRequest.DEFAULT_NONE,
    ):
        self.timeouts.append((read_timeout, write_timeout, connect_timeout, pool_timeout))
        return 200, b'{"ok": true, "result": []}'


async def test_a_time_out_not_given_reaches_the_transport_as_default_none():
    request = RecordingRequest()

    await request.post("http://127.0.0.1:9/bot42:token/getUpdates", request_data({}))
    await request.post("http://127.0.0.1:9/bot42:token/getUpdates", None, read_timeout=3.5)

    unset, read_given = request.timeouts
    assert all(value is BaseRequest.DEFAULT_NONE for value in unset)
    assert read_given[0] == 3.5
    assert all(value is BaseRequest.DEFAULT_NONE for value in read_given[1:])
