"""Files on disk: atomic writes and the session store."""
