"""The `memory_items` table: one row per item of one owner, read and written by
`PostgresRepository` (`bot/adapters/postgres/memory.py`). Every query names its owner.

    item          the `MemoryItem` as JSON: the record; the other columns serve the queries
    terms         the item's words as memory tokenizes them (`bot/memory/text.py`), repeats kept
    lexemes       those words as a tsvector (generated), under a GIN index
    vector        float32 bytes of `vector_model`'s embedding of the item, or NULL

Why the bot's own words and not a PostgreSQL text search configuration (`simple`, `english`,
`russian`): the file store stems English and Russian word by word, keeps `10.0.0.5` whole and
splits `docker-compose` into its parts as well. A configuration of the database would cut and
stem differently (one language per text, its own parser), and the same question would find
other items in the two stores. So the terms come from `tokens()`, `array_to_tsvector` takes
them as they are, and a query is a tsquery of quoted terms: the index finds the items sharing
a word with the question, and BM25 is computed in Python the same way as in the file store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from psycopg import AsyncConnection

from bot.memory.index import SCAN_LIMIT
from bot.memory.model import Layer, MemoryItem, static_prior
from bot.memory.scoring import hub_corrected
from bot.memory.text import tokens
from bot.ports.embeddings import Vectors, cosines

LIVE = "owner = %(owner)s AND (expires_at IS NULL OR expires_at > %(now)s)"
"""The rows of one owner that have not expired."""
FIELDS = "id, item"

VECTOR_LIMIT = 20_000
"""Vectors read for one question at most, newest first: 30 MB at 384 dimensions."""


def tsquery(terms: list[str]) -> str:
    """A tsquery matching any of `terms`, each quoted so it is taken as it is."""
    return " | ".join(_quoted(term) for term in terms)


def _quoted(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def row_of(owner: str, item: MemoryItem) -> dict[str, object]:
    """The parameters `upsert` writes for `item`."""
    terms = tokens(item.search_text())
    expires = None
    if item.ttl_days is not None:
        expires = item.updated_at + timedelta(days=item.ttl_days)
    return {
        "owner": owner,
        "id": item.id,
        "layer": item.layer.value,
        "type": item.type.value,
        "fingerprint": item.fingerprint,
        "prior": static_prior(item),
        "content": item.content,
        "updated_at": item.updated_at,
        "expires_at": expires,
        "item": item.model_dump_json(),
        "terms": terms,
        "length": len(terms),
    }


async def upsert(connection: AsyncConnection, owner: str, items: list[MemoryItem]) -> None:
    """Write each item; a changed wording drops its vector, to be embedded again."""
    async with connection.cursor() as cursor:
        await cursor.executemany(
            "INSERT INTO memory_items (owner, id, layer, type, fingerprint, prior, content,"
            " updated_at, expires_at, item, terms, length) VALUES (%(owner)s, %(id)s, %(layer)s,"
            " %(type)s, %(fingerprint)s, %(prior)s, %(content)s, %(updated_at)s,"
            " %(expires_at)s, %(item)s, %(terms)s, %(length)s)"
            " ON CONFLICT (owner, id) DO UPDATE SET"
            " layer = EXCLUDED.layer, type = EXCLUDED.type, fingerprint = EXCLUDED.fingerprint,"
            " prior = EXCLUDED.prior, content = EXCLUDED.content,"
            " updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at,"
            " item = EXCLUDED.item, terms = EXCLUDED.terms, length = EXCLUDED.length,"
            " vector = CASE WHEN memory_items.content = EXCLUDED.content"
            "   THEN memory_items.vector END,"
            " vector_model = CASE WHEN memory_items.content = EXCLUDED.content"
            "   THEN memory_items.vector_model END",
            [row_of(owner, item) for item in items],
        )


async def by_fingerprint(
    connection: AsyncConnection, owner: str, fingerprints: list[str], now: datetime
) -> dict[str, MemoryItem]:
    """The newest live item of each fingerprint (the caller holds the owner's write lock)."""
    cursor = await connection.execute(
        f"SELECT DISTINCT ON (fingerprint) fingerprint, item FROM memory_items WHERE {LIVE}"
        " AND fingerprint = ANY(%(fingerprints)s) ORDER BY fingerprint, updated_at DESC",
        {"owner": owner, "now": now, "fingerprints": fingerprints},
    )
    return {fp: MemoryItem.model_validate_json(text) for fp, text in await cursor.fetchall()}


async def one(connection: AsyncConnection, owner: str, item_id: str) -> MemoryItem | None:
    cursor = await connection.execute(
        "SELECT item FROM memory_items WHERE owner = %s AND id = %s FOR UPDATE", (owner, item_id)
    )
    row = await cursor.fetchone()
    return MemoryItem.model_validate_json(row[0]) if row else None


async def by_ids(
    connection: AsyncConnection, owner: str, item_ids: list[str]
) -> dict[str, MemoryItem]:
    cursor = await connection.execute(
        f"SELECT {FIELDS} FROM memory_items WHERE owner = %s AND id = ANY(%s)", (owner, item_ids)
    )
    return {
        item_id: MemoryItem.model_validate_json(text) for item_id, text in await cursor.fetchall()
    }


async def live(
    connection: AsyncConnection, owner: str, now: datetime, where: str = "TRUE"
) -> list[MemoryItem]:
    """The owner's live items (`where`: a further condition), newest first."""
    cursor = await connection.execute(
        f"SELECT item FROM memory_items WHERE {LIVE} AND {where} ORDER BY updated_at DESC",
        {"owner": owner, "now": now},
    )
    return [MemoryItem.model_validate_json(text) for (text,) in await cursor.fetchall()]


async def size(connection: AsyncConnection, owner: str, now: datetime) -> int:
    """How many live items the owner has."""
    cursor = await connection.execute(
        f"SELECT count(*) FROM memory_items WHERE {LIVE}", {"owner": owner, "now": now}
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class WordStatistics:
    """What BM25 needs of the owner's items besides the matches themselves."""

    count: int
    """Live items."""
    total_length: int
    """Their terms in all (for the average length)."""
    holding: list[int]
    """How many of them hold each query term, in the query's order."""


async def statistics(
    connection: AsyncConnection, owner: str, now: datetime, terms: list[str]
) -> WordStatistics:
    """Counts for BM25 in one round trip: items, their length, each term's document count."""
    cursor = await connection.execute(
        f"SELECT count(*), coalesce(sum(length), 0), ARRAY(SELECT (SELECT count(*)"
        f" FROM memory_items WHERE {LIVE} AND lexemes @@ q.query::tsquery)"
        " FROM unnest(%(queries)s::text[]) WITH ORDINALITY AS q(query, n) ORDER BY n)"
        f" FROM memory_items WHERE {LIVE}",
        {"owner": owner, "now": now, "queries": [_quoted(term) for term in terms]},
    )
    row = await cursor.fetchone()
    if row is None:
        return WordStatistics(0, 0, [0] * len(terms))
    return WordStatistics(int(row[0]), int(row[1]), [int(n) for n in row[2]])


def searched_terms(terms: list[str], holding: list[int]) -> list[str]:
    """The terms whose items are read, as the file store's index reads postings: those held
    by at most `SCAN_LIMIT` items (a common word then only adds its weight to what they
    found), else the rarest one alone (its newest `SCAN_LIMIT` items)."""
    held = [(count, term) for term, count in zip(terms, holding, strict=True) if count]
    rare = [term for count, term in held if count <= SCAN_LIMIT]
    return rare or [min(held)[1]] if held else []


async def sharing_words(
    connection: AsyncConnection, owner: str, now: datetime, terms: list[str], searched: list[str]
) -> list[tuple[str, int, list[int]]]:
    """The live items holding any of the `searched` terms, newest first, `SCAN_LIMIT` per
    term at most: each as (id, its length in terms, how often it holds each of `terms`)."""
    cursor = await connection.execute(
        "SELECT id, length, ARRAY(SELECT cardinality(array_positions(terms, q.term))"
        " FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS q(term, n) ORDER BY n)"
        f" FROM (SELECT id, length, terms FROM memory_items WHERE {LIVE}"
        " AND lexemes @@ %(query)s::tsquery ORDER BY updated_at DESC LIMIT %(limit)s) m",
        {
            "owner": owner,
            "now": now,
            "terms": terms,
            "query": tsquery(searched),
            "limit": SCAN_LIMIT * len(searched),
        },
    )
    return [(item_id, length, counts) for item_id, length, counts in await cursor.fetchall()]


async def vectors(
    connection: AsyncConnection, owner: str, now: datetime, model_id: str, oldest: datetime
) -> list[tuple[str, bytes]]:
    """The vectors of `model_id` of the items a recall may show: facts and how-tos, and the
    episodes since `oldest` (older ones are not recalled anyway), newest first."""
    cursor = await connection.execute(
        f"SELECT id, vector FROM memory_items WHERE {LIVE} AND vector_model = %(model)s"
        " AND (layer <> %(episodic)s OR updated_at >= %(oldest)s)"
        f" ORDER BY updated_at DESC LIMIT {VECTOR_LIMIT}",
        {
            "owner": owner,
            "now": now,
            "model": model_id,
            "episodic": Layer.EPISODIC.value,
            "oldest": oldest,
        },
    )
    return [(item_id, bytes(blob)) for item_id, blob in await cursor.fetchall()]


async def strongest(
    connection: AsyncConnection, owner: str, now: datetime, per_layer: int
) -> dict[str, MemoryItem]:
    """Per layer, the `per_layer` live items with the highest static prior (as
    `UserItems.strongest` orders them: prior, then id, highest first)."""
    cursor = await connection.execute(
        "SELECT s.id, s.item FROM unnest(%(layers)s::text[]) AS l(layer), LATERAL"
        f" (SELECT id, item FROM memory_items WHERE {LIVE} AND layer = l.layer"
        " ORDER BY prior DESC, id DESC LIMIT %(limit)s) s",
        {"owner": owner, "now": now, "limit": per_layer, "layers": [x.value for x in Layer]},
    )
    return {
        item_id: MemoryItem.model_validate_json(text) for item_id, text in await cursor.fetchall()
    }


async def unembedded(
    connection: AsyncConnection, owner: str, now: datetime, model_id: str, limit: int
) -> list[MemoryItem]:
    """Up to `limit` live items without a vector of `model_id`, newest first."""
    cursor = await connection.execute(
        f"SELECT item FROM memory_items WHERE {LIVE}"
        " AND vector_model IS DISTINCT FROM %(model)s ORDER BY updated_at DESC LIMIT %(limit)s",
        {"owner": owner, "now": now, "model": model_id, "limit": limit},
    )
    return [MemoryItem.model_validate_json(text) for (text,) in await cursor.fetchall()]


async def store_vectors(
    connection: AsyncConnection,
    owner: str,
    model_id: str,
    items: list[MemoryItem],
    found: Vectors,
) -> None:
    """Keep each item's vector, unless it was reworded (or forgotten) while being embedded."""
    async with connection.cursor() as cursor:
        await cursor.executemany(
            "UPDATE memory_items SET vector = %s, vector_model = %s"
            " WHERE owner = %s AND id = %s AND content = %s",
            [
                (np.asarray(row, dtype="<f4").tobytes(), model_id, owner, item.id, item.content)
                for item, row in zip(items, found, strict=True)
            ],
        )


def nearest(rows: list[tuple[str, bytes]], query: Vectors, limit: int) -> dict[str, float]:
    """Up to `limit` ids of `rows` nearest to `query`, best first, with their scores: the
    cosine to the question `hub_corrected` by the mean of the rows, as the file store ranks
    them (numpy; call it in a worker thread). Rows of another size than the query's are
    skipped."""
    width = query.shape[-1] * 4
    fitting = [(item_id, blob) for item_id, blob in rows if len(blob) == width]
    if not fitting or limit <= 0:
        return {}
    matrix = np.frombuffer(b"".join(blob for _, blob in fitting), dtype="<f4")
    matrix = matrix.reshape(len(fitting), -1)
    scores = cosines(matrix, hub_corrected(query, matrix.mean(axis=0, dtype=np.float64)))
    count = min(limit, len(fitting))
    best = np.argpartition(-scores, count - 1)[:count]
    best = best[np.argsort(-scores[best])]
    return {fitting[at][0]: float(scores[at]) for at in best}
