"""The items' vectors of the file repository: one file per user and embedding model, beside
the user's items (`bot/memory/vectors.py`), read into the user's `UserItems` as they load.

A restart never re-embeds what was embedded before. A new embedding model
(`memory.embeddings`) opens a new, empty vector file that fills in the background while recall
goes on by words; the old model's file is deleted once the new one is complete. What to embed
and when is `Embeddings`' (`bot/memory/semantic.py`); this module keeps and opens vectors.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from bot.memory.model import MemoryItem
from bot.memory.user_items import UserItems
from bot.memory.vectors import VectorFile, VectorIndex
from bot.ports.embeddings import Vectors

log = logging.getLogger(__name__)


class FileVectors:
    """Opens, extends and prunes each user's vector files."""

    def __init__(
        self,
        directory_of: Callable[[str], Path],
        items_of: Callable[[str], UserItems | None],
        lock_of: Callable[[str], asyncio.Lock],
    ) -> None:
        self._directory_of = directory_of
        self._items_of = items_of
        self._lock_of = lock_of
        self._dimensions: dict[str, int] = {}
        """Each model's size, learned from the first question it embedded this run."""
        self._complete: set[tuple[str, str]] = set()
        """(user, model) pairs whose older models' files are gone already this run."""
        self._embedding: dict[str, UserItems] = {}
        """The items each user's batch being embedded came from."""

    async def opened(self, user_id: str, items: UserItems, model_id: str, vector: Vectors) -> None:
        """A question was embedded by `model_id`: the user's vectors of that model are open
        when this returns (read from their file the first time)."""
        self._dimensions[model_id] = vector.shape[0]
        await self._open(user_id, items, model_id)

    async def unembedded(self, user_id: str, model_id: str, limit: int) -> list[MemoryItem]:
        """Up to `limit` loaded items without a vector of `model_id`. None until a question
        or the user's file of the model has told the model's size; none left: older models'
        files go."""
        items = self._items_of(user_id)
        if items is None:
            return []
        if items.vectors is None or items.vectors.model_id != model_id:
            if model_id not in self._dimensions:
                await self._learn_size_on_disk(user_id, model_id)
            if model_id not in self._dimensions:  # (a recall may have learnt it meanwhile)
                return []  # the first recall learns the model's size and opens the vectors
            await self._open(user_id, items, model_id)
        batch = items.without_vectors(limit)
        if not batch:
            await self._drop_other_models(user_id, items)
        self._embedding[user_id] = items
        return batch

    async def store(
        self, user_id: str, model_id: str, batch: list[MemoryItem], vectors: Vectors
    ) -> None:
        """Append the vectors of `batch` to the user's file of `model_id`, unless the model
        changed or the user's items were forgotten (or evicted) meanwhile."""
        items = self._embedding.pop(user_id, None)
        index = items.vectors if items is not None else None
        if items is None or index is None or index.model_id != model_id:
            return  # the model changed meanwhile: these vectors belong to no open index
        file = VectorFile.of(self._directory_of(user_id), model_id, index.dimensions)
        async with self._lock_of(user_id):
            if self._items_of(user_id) is not items:
                return  # forgotten (or evicted) while being embedded: nothing may be written
            ids, kept = items.embedded(batch, vectors)
            await asyncio.to_thread(file.append, ids, kept)

    async def forget(self, user_id: str, item_ids: set[str]) -> None:
        """Delete these items' vectors from every model's file (call under the user's lock)."""
        await asyncio.to_thread(self._remove_from_files, user_id, item_ids)

    async def _open(self, user_id: str, items: UserItems, model_id: str) -> None:
        if items.vectors is not None and items.vectors.model_id == model_id:
            return
        dimensions = self._dimensions[model_id]
        file = VectorFile.of(self._directory_of(user_id), model_id, dimensions)
        async with self._lock_of(user_id):
            if items.vectors is not None and items.vectors.model_id == model_id:
                return
            # Held lock: no write changes the items while the thread reads their vectors.
            wanted = list(items.items)
            index, missing = await asyncio.to_thread(_read_index, file, model_id, wanted)
            items.open_vectors(index, missing)

    async def _learn_size_on_disk(self, user_id: str, model_id: str) -> None:
        """Learn the model's vector size from this user's file of it, if there is one: after
        a restart, before any question was embedded, a fill can then open the vectors."""
        directory = self._directory_of(user_id)

        def size() -> int | None:
            for file in VectorFile.every(directory):
                if VectorFile.of(directory, model_id, file.dimensions).path == file.path:
                    return file.dimensions
            return None

        found = await asyncio.to_thread(size)
        if found is not None:
            self._dimensions.setdefault(model_id, found)

    async def _drop_other_models(self, user_id: str, items: UserItems) -> None:
        """Once per user and model and run: a fill after every turn need not list the folder."""
        index = items.vectors
        if index is None or (user_id, index.model_id) in self._complete:
            return
        self._complete.add((user_id, index.model_id))
        current = VectorFile.of(self._directory_of(user_id), index.model_id, index.dimensions)
        for file in VectorFile.every(self._directory_of(user_id)):
            if file.path != current.path:
                file.path.unlink(missing_ok=True)
                log.info("[Memory] deleted the vectors of a previous embedding model")

    def _remove_from_files(self, user_id: str, item_ids: set[str]) -> None:
        for file in VectorFile.every(self._directory_of(user_id)):
            file.remove(item_ids)


def _read_index(
    file: VectorFile, model_id: str, wanted: list[str]
) -> tuple[VectorIndex, list[str]]:
    """The vectors of `wanted` items in `file`, indexed, and the items without one (in a
    worker thread: 100k rows would pause the event loop)."""
    ids, vectors = file.load(set(wanted))
    index = VectorIndex.of(model_id, file.dimensions, ids, vectors)
    return index, [item_id for item_id in wanted if item_id not in index]
