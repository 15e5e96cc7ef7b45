"""The schema, as a list of numbered steps applied once each, in order, at every start.

A step is never edited once released: a change to the schema is a new step. The steps run in
one transaction under an advisory lock, so processes starting together apply each step once,
and a failed step leaves the schema as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import AsyncConnection


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions",
        """
        CREATE TABLE sessions (
            key text PRIMARY KEY,
            session text NOT NULL,
            people text[] NOT NULL,
            updated_at timestamptz NOT NULL
        );
        CREATE INDEX sessions_people ON sessions USING gin (people);
        CREATE TABLE archived_sessions (
            id bigserial PRIMARY KEY,
            key text NOT NULL,
            session text NOT NULL,
            people text[] NOT NULL,
            archived_at timestamptz NOT NULL
        );
        CREATE INDEX archived_sessions_people ON archived_sessions USING gin (people);
        """,
    ),
    Migration(
        2,
        "usage",
        """
        CREATE TABLE usage_calls (
            id bigserial PRIMARY KEY,
            day date NOT NULL,
            who text NOT NULL,
            model text NOT NULL,
            prompt_tokens integer NOT NULL,
            completion_tokens integer NOT NULL
        );
        CREATE INDEX usage_calls_day ON usage_calls (day, who);
        """,
    ),
    Migration(
        10,
        "memory items",
        """
        CREATE TABLE memory_items (
            owner text NOT NULL,
            id text NOT NULL,
            layer text NOT NULL,
            type text NOT NULL,
            fingerprint text NOT NULL,
            prior double precision NOT NULL,
            content text NOT NULL,
            updated_at timestamptz NOT NULL,
            expires_at timestamptz,
            item text NOT NULL,
            terms text[] NOT NULL,
            length integer NOT NULL,
            lexemes tsvector GENERATED ALWAYS AS (array_to_tsvector(terms)) STORED,
            vector_model text,
            vector bytea,
            PRIMARY KEY (owner, id)
        );
        CREATE INDEX memory_items_lexemes ON memory_items USING gin (lexemes);
        CREATE INDEX memory_items_fingerprint ON memory_items (owner, fingerprint);
        CREATE INDEX memory_items_newest ON memory_items (owner, layer, updated_at);
        CREATE INDEX memory_items_prior ON memory_items (owner, layer, prior, id);
        CREATE INDEX memory_items_length ON memory_items (owner) INCLUDE (length, expires_at);
        """,
    ),
    Migration(
        11,
        "rag index queue and ledger",
        """
        CREATE TABLE rag_queue (
            id bigserial PRIMARY KEY,
            owner text NOT NULL,
            document text NOT NULL,
            claimed_until timestamptz,
            refused text
        );
        CREATE INDEX rag_queue_waiting ON rag_queue (id) WHERE refused IS NULL;
        CREATE INDEX rag_queue_owner ON rag_queue (owner);
        CREATE TABLE rag_ledger (
            owner text NOT NULL,
            file_source text NOT NULL,
            first bigserial,
            entry text NOT NULL,
            PRIMARY KEY (owner, file_source)
        );
        """,
    ),
    Migration(
        20,
        "telegram inbox",
        """
        CREATE TABLE telegram_inbox (
            update_id bigint PRIMARY KEY,
            slot integer NOT NULL,
            sender text,
            body text,
            starts integer NOT NULL DEFAULT 0,
            preview bigint[] NOT NULL DEFAULT '{}',
            answer text,
            done boolean NOT NULL,
            received_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX telegram_inbox_waiting ON telegram_inbox (slot, update_id) WHERE NOT done;
        CREATE INDEX telegram_inbox_sender ON telegram_inbox (sender) WHERE body IS NOT NULL;
        """,
    ),
    Migration(
        30,
        "reminders",
        """
        CREATE TABLE reminders (
            id text PRIMARY KEY,
            user_id text NOT NULL,
            session_key text NOT NULL,
            next_at timestamptz,
            due_at timestamptz,
            interrupted boolean NOT NULL,
            reminder jsonb NOT NULL
        );
        CREATE INDEX reminders_due ON reminders (due_at) WHERE due_at IS NOT NULL;
        CREATE INDEX reminders_interrupted ON reminders (id) WHERE interrupted;
        CREATE INDEX reminders_user ON reminders (user_id);
        CREATE INDEX reminders_chat ON reminders (session_key);
        CREATE TABLE reminder_timezones (
            user_id text PRIMARY KEY,
            zone text NOT NULL
        );
        """,
    ),
    Migration(
        31,
        "choices",
        """
        CREATE TABLE choices (
            kind text NOT NULL,
            key text NOT NULL,
            value jsonb NOT NULL,
            PRIMARY KEY (kind, key)
        );
        """,
    ),
    Migration(
        32,
        "usage: answers cut at the token limit",
        "ALTER TABLE usage_calls ADD COLUMN cut boolean NOT NULL DEFAULT false;",
    ),
)

MIGRATION_LOCK = 0x6D656D6F7279  # "memory": one advisory lock id for schema changes
"""Held while migrating, so two processes starting at once never apply a step twice."""


async def migrate(connection: AsyncConnection) -> list[int]:
    """Apply the steps this database lacks; returns their versions (empty when up to date)."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await connection.execute("SELECT version FROM schema_migrations")
        applied = {row[0] for row in await cursor.fetchall()}
        done: list[int] = []
        for step in MIGRATIONS:
            if step.version in applied:
                continue
            await connection.execute(step.sql.encode())
            await connection.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (step.version, step.name),
            )
            done.append(step.version)
        return done
