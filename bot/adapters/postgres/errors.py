"""The database's failures as the rest of the bot catches them, without psycopg: a bot on
files (no `DATABASE_URL`) never imports the driver (`bot/adapters/postgres/database.py`)."""

from bot.ports.health import StoreDown


class DatabaseUnavailable(Exception):
    """The database could not be reached or prepared at start; the message is for people."""


class DatabaseDown(StoreDown):
    """A call could not reach the database while the bot runs (logged by `DatabaseHealth`)."""
