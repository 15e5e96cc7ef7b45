"""A round-robin HTTP load balancer for webhook posts, as nginx's `upstream` does by default:
each post goes to the next backend in turn, and a backend that refuses the connection (a dead
process) is skipped for the next one (`proxy_next_upstream error`). Every answer is the
backend's own; with no backend up it answers 502, and Telegram posts again later."""

from __future__ import annotations

from collections import Counter

from aiohttp import ClientConnectorError, ClientError, ClientSession, ClientTimeout, web

from tests.fakes.background_server import BackgroundServer


class RoundRobinBalancer(BackgroundServer):
    """Forwards every POST (path, headers, body) to `backends` in turn."""

    def __init__(self, backends: list[str]) -> None:
        super().__init__()
        self.backends = list(backends)
        self._next = 0
        self.posts: Counter[str] = Counter()
        """Posts each backend answered, by its base URL."""
        self._session: ClientSession | None = None

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{tail:.*}", self._forward)

    async def on_stop(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=10))
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host",)}
        for _ in range(len(self.backends)):
            backend = self.backends[self._next % len(self.backends)]
            self._next += 1
            try:
                async with self._session.post(
                    backend + request.path_qs, data=body, headers=headers
                ) as answer:
                    payload = await answer.read()
                    self.posts[backend] += 1
                    return web.Response(status=answer.status, body=payload)
            except ClientConnectorError:
                continue  # a dead backend: the next one
            except (ClientError, TimeoutError):  # died mid-post: Telegram will post again
                return web.Response(status=502, text="backend failed")
        return web.Response(status=502, text="no backend")
