"""`/readyz` and `/healthz`: which states make the bot unready, and what the listener refuses."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import psycopg

from bot.adapters.postgres.database import DatabaseDown
from bot.config import RuntimeConfig
from bot.ops.checks import DatabaseReadiness, RagReadiness, StoreReadiness
from bot.ops.metrics import PrometheusMetrics
from bot.ops.probe import main as probe_main
from bot.ops.readiness import Readiness
from bot.ops.server import MAX_CONCURRENT, MAX_LINE_BYTES, OpsServer
from bot.ports.health import Health, HealthState
from bot.rag.model import RagHealth
from bot.storage.disk import DiskHealth
from tests.fakes.clock import FakeClock
from tests.fakes.full_disk import FullDisk
from tests.fakes.waiting import wait_until


def fixed(state: HealthState, detail: str = "") -> object:
    async def check() -> Health:
        return Health(state, detail)

    return check


async def test_degraded_and_off_parts_are_ready_a_down_part_is_not():
    ready = await Readiness(
        {"lightrag": fixed(HealthState.DEGRADED), "speech": fixed(HealthState.OFF)}
    ).report()
    assert ready.ready
    unready = await Readiness(
        {"lightrag": fixed(HealthState.OK), "llm": fixed(HealthState.DOWN, "unreachable")}
    ).report()
    assert not unready.ready
    assert unready.as_json() == {
        "status": "unready",
        "checks": {
            "lightrag": {"state": "ok", "detail": ""},
            "llm": {"state": "down", "detail": "unreachable"},
        },
    }


async def test_a_check_that_hangs_or_raises_is_down_and_the_others_still_answer():
    async def hangs() -> Health:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def raises() -> Health:
        raise RuntimeError("boom")

    report = await Readiness(
        {"slow": hangs, "broken": raises, "fine": fixed(HealthState.OK)}, timeout_seconds=0.05
    ).report()
    assert report.parts["slow"].state is HealthState.DOWN
    assert "within" in report.parts["slow"].detail
    assert report.parts["broken"].state is HealthState.DOWN
    assert report.parts["fine"].state is HealthState.OK


async def test_probers_asking_often_cause_one_look_per_cache_period():
    looks = 0

    async def counted() -> Health:
        nonlocal looks
        looks += 1
        await asyncio.sleep(0)
        return Health(HealthState.OK)

    clock = FakeClock()
    readiness = Readiness({"llm": counted}, cache_seconds=2.0, clock=clock)
    await asyncio.gather(*(readiness.report() for _ in range(20)))
    await readiness.report()
    assert looks == 1
    clock.advance(2.5)
    await readiness.report()
    assert looks == 2


class FakeRag:
    def __init__(self, healthy: bool) -> None:
        self.healthy = healthy
        self.asked = 0

    async def health(self) -> RagHealth:
        self.asked += 1
        return RagHealth(self.healthy, "unreachable at http://10.0.0.5:9621")


async def test_lightrag_is_off_or_degraded_never_down_and_its_address_is_not_shown():
    config = RuntimeConfig.model_validate({"rag": {"enabled": True}})
    down = await RagReadiness(lambda: config, FakeRag(healthy=False))()
    assert down.state is HealthState.DEGRADED
    assert "10.0.0.5" not in down.detail
    assert (await RagReadiness(lambda: config, FakeRag(healthy=True))()).state is HealthState.OK
    off_rag = FakeRag(healthy=True)
    off = await RagReadiness(lambda: RuntimeConfig(), off_rag)()
    assert off.state is HealthState.OFF
    assert off_rag.asked == 0, "a switched-off LightRAG is not asked"


async def test_the_store_is_down_while_the_disk_refuses_writes(tmp_path, monkeypatch):
    disk = DiskHealth()
    store = StoreReadiness(tmp_path, disk)
    assert (await store()).state is HealthState.OK
    full_disk = FullDisk(monkeypatch, tmp_path)
    refused = await store()
    assert refused.state is HealthState.DOWN
    assert "No space left on device" in refused.detail
    full_disk.full = False
    assert (await store()).state is HealthState.OK
    # a store whose last write failed keeps it unready until one of its writes goes through
    disk.failed("sessions", OSError(28, "No space left on device"))
    full = await StoreReadiness(tmp_path, disk)()
    assert full.state is HealthState.DOWN
    assert "sessions (No space left on device)" in full.detail
    disk.wrote("sessions")
    assert (await store()).state is HealthState.OK


class FakeDatabase:
    """`Database.connection` as readiness uses it: a connection that answers, or the failure
    the real one raises (`DatabaseDown` from the driver's error), or one that hangs."""

    def __init__(self) -> None:
        self.failure: Exception | None = None
        self.hangs = False
        self.queries: list[str] = []

    @contextlib.asynccontextmanager
    async def connection(self, what: str, retry: bool = False):
        assert retry, "readiness looks even while turns rest"
        if self.hangs:
            await asyncio.Event().wait()
        if self.failure is not None:
            raise DatabaseDown(what) from self.failure
        yield self

    async def execute(self, query: str) -> None:
        self.queries.append(query)


async def test_the_database_is_down_while_unreachable_and_says_why_without_its_address():
    database = FakeDatabase()
    check = DatabaseReadiness(database, look_seconds=0.05)  # type: ignore[arg-type]
    assert await check() == Health(HealthState.OK, "reachable")
    assert database.queries == ["SELECT 1"]
    database.failure = psycopg.OperationalError(
        'connection failed: connection to server at "10.0.0.5", port 5432 failed: '
        "Connection refused\n\tIs the server running on that host?"
    )
    down = await check()
    assert down == Health(HealthState.DOWN, "the database cannot be reached (Connection refused)")
    database.failure, database.hangs = None, True
    hanging = await check()
    assert hanging == Health(HealthState.DOWN, "the database gave no answer in 0.05s")


async def test_the_listener_answers_probes_and_refuses_bodies_methods_and_long_lines():
    server = OpsServer(
        Readiness({"llm": fixed(HealthState.DOWN, "unreachable")}), PrometheusMetrics()
    )
    await server.start("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as response:
                assert response.status == 200
                assert (await response.json())["status"] == "ok"
            async with http.get(f"{base}/readyz") as response:
                assert response.status == 503
                assert (await response.json())["checks"]["llm"]["state"] == "down"
            async with http.get(f"{base}/metrics") as response:
                assert response.status == 200
                assert "bot_turns" in await response.text()
            async with http.post(f"{base}/metrics", data=b"x" * 1000) as response:
                assert response.status == 405
            async with http.get(f"{base}/nothing-here") as response:
                assert response.status == 404
            long_header = {"X-Padding": "a" * (MAX_LINE_BYTES + 100)}
            async with http.get(f"{base}/healthz", headers=long_header) as response:
                assert response.status in (400, 431)
    finally:
        await server.stop()


async def test_the_healthcheck_probe_exits_by_the_answer(monkeypatch):
    llm_state = [HealthState.DOWN]

    async def llm() -> Health:
        return Health(llm_state[0])

    server = OpsServer(Readiness({"llm": llm}, cache_seconds=0), PrometheusMetrics())
    await server.start("127.0.0.1", 0)
    try:
        monkeypatch.setenv("HTTP_PORT", str(server.port))
        monkeypatch.setenv("HTTP_LISTEN", "0.0.0.0")
        assert await asyncio.to_thread(probe_main, ["healthz"]) == 0
        assert await asyncio.to_thread(probe_main, ["readyz"]) == 1
        llm_state[0] = HealthState.OK
        assert await asyncio.to_thread(probe_main, ["readyz"]) == 0
    finally:
        await server.stop()
    monkeypatch.delenv("HTTP_PORT")
    assert probe_main(["readyz"]) == 1, "no listener configured: not ready"
    assert probe_main(["anything"]) == 2


async def test_healthz_answers_while_readyz_requests_fill_every_place():
    answered = asyncio.Event()

    async def stuck() -> Health:
        await answered.wait()
        return Health(HealthState.OK)

    server = OpsServer(Readiness({"llm": stuck}, timeout_seconds=600), PrometheusMetrics())
    await server.start("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.port}"
    async with aiohttp.ClientSession() as http:

        async def status(path: str) -> int:
            async with http.get(f"{base}{path}") as response:
                return response.status

        held = [asyncio.ensure_future(status("/readyz")) for _ in range(MAX_CONCURRENT)]
        try:
            await wait_until(lambda: server.answering == MAX_CONCURRENT)
            assert await status("/readyz") == 503, "every place is held"
            assert await status("/healthz") == 200
        finally:
            answered.set()
            statuses = await asyncio.gather(*held)
            await server.stop()
    assert statuses == [200] * MAX_CONCURRENT
