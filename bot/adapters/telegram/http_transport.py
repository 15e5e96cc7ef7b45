"""python-telegram-bot's HTTP transport on aiohttp instead of httpx.

PTB lets a bot bring its own `BaseRequest`. Measured against the emulated Bot API, a request
through aiohttp costs about a third of the CPU of one through httpx/httpcore, whose connection
pool re-checks every pooled socket on each request; with a hundred chats answered at once that
difference is most of the bot's own time per message (see bench/telegram_concurrency.py).
Timeouts and errors keep PTB's meaning: `TimedOut` for time-outs, `NetworkError` otherwise.
"""

from __future__ import annotations

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

DOWNLOAD_CHUNK_BYTES = 64 * 1024


class BodyTooLarge(Exception):
    """A download went past the size it was allowed."""

    def __init__(self, limit_bytes: int) -> None:
        super().__init__(f"more than {limit_bytes} bytes")
        self.limit_bytes = limit_bytes


class AiohttpRequest(BaseRequest):
    """One aiohttp session with a bounded connection pool; PTB calls `do_request`."""

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 10.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size),
                headers={"User-Agent": self.USER_AGENT},
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("AiohttpRequest is not initialized")
        has_files = bool(request_data and request_data.contains_files)
        read = _or(read_timeout, self._read_timeout)
        write = _or(write_timeout, self._media_write_timeout if has_files else self._write_timeout)
        connect = _or(connect_timeout, self._connect_timeout)
        pool = _or(pool_timeout, self._pool_timeout)
        parts = (pool, connect, write, read)
        timeout = aiohttp.ClientTimeout(
            # aiohttp has no write time-out of its own: the total bounds a stalled write.
            total=None if None in parts else sum(parts),  # type: ignore[arg-type]
            connect=None if pool is None or connect is None else pool + connect,
            sock_connect=connect,
            sock_read=read,
        )
        try:
            async with self._session.request(
                method, url, data=_body(request_data), timeout=timeout
            ) as response:
                return response.status, await response.read()
        except TimeoutError as exc:
            raise TimedOut from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc

    async def fetch_bounded(self, url: str, max_bytes: int, timeout_seconds: float) -> bytes:
        """GET a file into memory, reading at most `max_bytes` (`BodyTooLarge` past that).

        PTB's own `retrieve` reads any size; a file URL holds the bot token, so errors name
        the failure, never the URL.
        """
        if self._session is None or self._session.closed:
            raise RuntimeError("AiohttpRequest is not initialized")
        timeout = aiohttp.ClientTimeout(
            total=timeout_seconds, sock_connect=self._connect_timeout, sock_read=30.0
        )
        try:
            async with self._session.get(url, timeout=timeout) as response:
                if response.status != 200:
                    raise NetworkError(f"file download answered HTTP {response.status}")
                if response.content_length is not None and response.content_length > max_bytes:
                    raise BodyTooLarge(max_bytes)
                body = bytearray()
                async for chunk in response.content.iter_chunked(DOWNLOAD_CHUNK_BYTES):
                    body.extend(chunk)
                    if len(body) > max_bytes:
                        raise BodyTooLarge(max_bytes)
                return bytes(body)
        except TimeoutError as exc:
            raise TimedOut("file download timed out") from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"file download failed: aiohttp.{type(exc).__name__}") from exc


def _or(value: object, default: float | None) -> float | None:
    """A time-out PTB passed, else ours: PTB marks one not given with `DEFAULT_NONE`, its
    documented check (`BaseRequest.DEFAULT_NONE`), so its private types are not needed."""
    if value is BaseRequest.DEFAULT_NONE:
        return default
    if value is None or isinstance(value, int | float):
        return value
    raise TypeError(f"a time-out of {value!r}")


def _body(request_data: RequestData | None) -> dict[str, str] | aiohttp.FormData | None:
    if request_data is None:
        return None
    if not request_data.contains_files:
        return request_data.json_parameters
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mime_type) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mime_type)
    return form
