"""Shared state on PostgreSQL, selected by `DATABASE_URL` (files stay the default): the
connection pool and its health, the schema's migrations, and one store per port."""
