"""One user's item vectors: bytes and a scale per row in memory, a file of records on disk.

    <user folder>/vectors/<model>.<dimensions>.f16

Each record is an item id (16 bytes, zero-padded) and its vector as float16; appends only, the
last record of an id wins, and a record cut short by a crash is dropped at the next load. A
file per model: vectors of another model live in another space and are never compared, so a
model change starts an empty file that memory fills in the background. Reading 100k records
is one `numpy.fromfile`, so a cold start never re-embeds what was embedded before.

In memory each vector is 16-bit integer codes and one float32 scale (`quantized`): 772 bytes
a row of 384 rather than 1,536 as float32, 7.5 MB less per user at 10k items. A code is within
half a step (1/65,534 of the row's largest component) of the vector: finer than the float16 of
the file, so recall finds what it found with float32 (the recall benchmarks gave the same
figures; 8-bit codes, a cosine off by up to 1e-3, lost a planted fact of 33). A search turns a
block of rows back into float32 at a time and multiplies it by the query with BLAS on the
calling thread (`cosines`), as fast as a float32 matrix; float16 would be no smaller and 10x
slower (numpy has no float16 BLAS and converts it element by element).

Rows loaded from the file fill a main block of just their size; rows added later go to a tail
block of max(64 rows, 1/8 of the main block), searched after it. A full tail is folded into
the main block, which then gets a new tail: a user's vectors take at most 1/8 more than their
rows (plus 64), and the first item added after a load copies nothing. Doubling the block
instead reserved 15 MB at 10k rows of 384, half of it idle, and copied the loaded 7.7 MB on
the first item added (1 ms of CPU per user).

The index also keeps the sum of its live rows (as a search sees them, float64), updated as
rows come and go, so a search can hand recall the mean of the user's vectors for nothing
(`VectorSearch.mean`, what `hub_corrected` in `bot/memory/scoring.py` takes).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bot.ports.embeddings import COSINE_BLOCK, Vectors, cosines
from bot.storage.atomic import fsync_dir, open_private, write_atomic

ID_BYTES = 16
CODE_STEPS = 32_767
"""A code's largest magnitude: the row's largest component maps to it."""
TAIL_MIN_ROWS = 64
TAIL_FRACTION = 8
"""The tail block's rows: max(TAIL_MIN_ROWS, main block's rows // TAIL_FRACTION)."""
SEARCH_BLOCK = COSINE_BLOCK
"""Rows turned back into float32 at once by a search or coded at once by `quantized` (1.5 MB
of scratch at 384 dimensions): a load of 10k rows made whole float32 copies of 15 MB, which
glibc then kept in a worker thread's arena, some 20 MB of RSS per loaded user."""


def quantized(
    vectors: npt.ArrayLike,
) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.float32]]:
    """Each row (float16 or float32) as int16 codes and the scale that turns them back:
    row ~= codes * scale. Coded a block of rows at a time, so no copy of the whole is made."""
    source = np.asarray(vectors)
    count, dimensions = source.shape
    codes = np.empty((count, dimensions), dtype=np.int16)
    scale = np.empty(count, dtype=np.float32)
    for start in range(0, count, SEARCH_BLOCK):
        end = min(start + SEARCH_BLOCK, count)
        block = source[start:end].astype(np.float32)
        step = np.abs(block).max(axis=1) / CODE_STEPS
        scale[start:end] = step
        block /= np.where(step > 0, step, 1.0)[:, None]
        codes[start:end] = np.rint(block, out=block)
    return codes, scale


def _sum_of(
    codes: npt.NDArray[np.int16], scale: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """The sum of the rows `codes * scale`, a block at a time (no float copy of the whole)."""
    total = np.zeros(codes.shape[1])
    for start in range(0, len(codes), SEARCH_BLOCK):
        end = min(start + SEARCH_BLOCK, len(codes))
        total += scale[start:end].astype(np.float64) @ codes[start:end]
    return total


def _record(dimensions: int) -> np.dtype[np.void]:
    return np.dtype([("id", f"S{ID_BYTES}"), ("vector", "<f2", (dimensions,))])


class VectorIndex:
    """Vectors of one model by item id, searched by cosine (rows are unit length)."""

    def __init__(self, model_id: str, dimensions: int = 0) -> None:
        self.model_id = model_id
        self.dimensions = dimensions
        self._codes: npt.NDArray[np.int16] = np.zeros((0, dimensions), dtype=np.int16)
        self._scale: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._tail_codes: npt.NDArray[np.int16] = np.zeros((0, dimensions), dtype=np.int16)
        self._tail_scale: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._used = 0
        self._total: npt.NDArray[np.float64] = np.zeros(dimensions)
        """The sum of the live rows, decoded."""

    def __len__(self) -> int:
        return len(self._row)

    @property
    def nbytes(self) -> int:
        """The memory its vectors hold, rows kept for growth included."""
        blocks = self._codes.nbytes + self._scale.nbytes
        return blocks + self._tail_codes.nbytes + self._tail_scale.nbytes + self._alive.nbytes

    @property
    def capacity(self) -> int:
        """The rows its blocks hold, used or kept for growth."""
        return len(self._codes) + len(self._tail_codes)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row

    def put(self, item_id: str, vector: npt.ArrayLike) -> None:
        row = np.asarray(vector, dtype=np.float32).reshape(-1)
        if not self.dimensions:
            self.dimensions = row.shape[0]
            self._total = np.zeros(self.dimensions)
            self._codes = np.zeros((0, self.dimensions), dtype=np.int16)
            self._tail_codes = np.zeros((0, self.dimensions), dtype=np.int16)
        if row.shape[0] != self.dimensions:
            raise ValueError(f"{row.shape[0]} dimensions, expected {self.dimensions}")
        codes, scale = quantized(row[None, :])
        at = self._row.get(item_id)
        if at is None:
            at = self._append_row(item_id)
        else:
            self._total -= self._decoded(at)
        main = len(self._codes)
        if at < main:
            self._codes[at], self._scale[at] = codes[0], scale[0]
        else:
            self._tail_codes[at - main], self._tail_scale[at - main] = codes[0], scale[0]
        self._total += self._decoded(at)

    def _decoded(self, at: int) -> npt.NDArray[np.float64]:
        """Row `at` as a search sees it."""
        main = len(self._codes)
        if at < main:
            return self._codes[at].astype(np.float64) * float(self._scale[at])
        at -= main
        return self._tail_codes[at].astype(np.float64) * float(self._tail_scale[at])

    @classmethod
    def of(
        cls, model_id: str, dimensions: int, item_ids: list[str], vectors: npt.ArrayLike
    ) -> VectorIndex:
        """`put_many` on a new index, in one copy rather than row by row (100k rows opened on
        the event loop paused it for half a second). Ids must be distinct."""
        index = cls(model_id, dimensions)
        if len(set(item_ids)) != len(item_ids):
            raise ValueError("VectorIndex.of needs distinct item ids")
        if item_ids:
            shape = np.shape(vectors)
            if shape != (len(item_ids), dimensions):
                raise ValueError(f"{shape} vectors, expected ({len(item_ids)}, {dimensions})")
            index._codes, index._scale = quantized(vectors)
            index._total = _sum_of(index._codes, index._scale)
            index._alive = np.ones(len(item_ids), dtype=bool)
            index._ids = list(item_ids)
            index._row = {item_id: at for at, item_id in enumerate(index._ids)}
            index._used = len(item_ids)
        return index

    def put_many(self, item_ids: list[str], vectors: Vectors) -> None:
        for item_id, vector in zip(item_ids, vectors, strict=True):
            self.put(item_id, vector)

    def remove(self, item_id: str) -> None:
        at = self._row.pop(item_id, None)
        if at is not None:
            self._total -= self._decoded(at)
            self._alive[at] = False
            if self._used > 64 and len(self._row) < self._used // 2:
                self._compact()

    def nearest(self, query: Vectors, limit: int) -> dict[str, float]:
        """Up to `limit` item ids with their cosine to `query`, best first."""
        return self.search_as_now()(query, limit)

    def search_as_now(self) -> VectorSearch:
        """`nearest` over the vectors as they are now, safe to run in a worker thread while the
        loop goes on changing the index (100k vectors take 15-40 ms to search, too long a pause
        for the loop). It shares the arrays: rows are only ever added at the end or replaced
        in place (a row read while being replaced may score as a mix of its old and new vector,
        in that one search), and a grown or compacted index gets new arrays and a new id list,
        leaving these alone."""
        tail = self._used - len(self._codes)
        blocks = [(self._codes, self._scale)]
        if tail:
            blocks.append((self._tail_codes[:tail], self._tail_scale[:tail]))
        live = len(self._row)
        mean = (self._total / live).astype(np.float32) if live else None
        return VectorSearch(blocks, self._alive[: self._used].copy(), self._ids, live, mean)

    def _append_row(self, item_id: str) -> int:
        if self._used == self.capacity:
            self._grow()
        at = self._used
        self._used += 1
        self._ids.append(item_id)
        self._row[item_id] = at
        self._alive[at] = True
        return at

    def _grow(self) -> None:
        """A new tail block, the full one (if any) folded into the main block first: the main
        block is copied once per 1/8 of its size added, never on the first row after a load."""
        if len(self._tail_codes):
            self._codes = np.concatenate((self._codes, self._tail_codes))
            self._scale = np.concatenate((self._scale, self._tail_scale))
        rows = max(TAIL_MIN_ROWS, len(self._codes) // TAIL_FRACTION)
        self._tail_codes = np.zeros((rows, self.dimensions), dtype=np.int16)
        self._tail_scale = np.zeros(rows, dtype=np.float32)
        alive = np.zeros(len(self._codes) + rows, dtype=bool)
        alive[: self._used] = self._alive[: self._used]
        self._alive = alive

    def _compact(self) -> None:
        keep = np.fromiter(self._row.values(), dtype=np.intp, count=len(self._row))
        main = len(self._codes)
        in_main, in_tail = keep[keep < main], keep[keep >= main] - main
        self._codes = np.concatenate((self._codes[in_main], self._tail_codes[in_tail]))
        self._scale = np.concatenate((self._scale[in_main], self._tail_scale[in_tail]))
        self._tail_codes = np.zeros((0, self.dimensions), dtype=np.int16)
        self._tail_scale = np.zeros(0, dtype=np.float32)
        self._alive = np.ones(len(keep), dtype=bool)
        self._ids = list(self._row)
        self._row = {item_id: at for at, item_id in enumerate(self._ids)}
        self._used = len(keep)


class VectorSearch:
    """A search over one moment's vectors of an index (`VectorIndex.search_as_now`)."""

    def __init__(
        self,
        blocks: list[tuple[npt.NDArray[np.int16], npt.NDArray[np.float32]]],
        alive: npt.NDArray[np.bool_],
        ids: list[str],
        live: int,
        mean: Vectors | None = None,
    ) -> None:
        self._blocks = blocks
        self._alive = alive
        self._ids = ids
        self._live = live
        self.mean = mean
        """The mean of the live rows when the search was taken; None when there are none."""

    def __call__(self, query: Vectors, limit: int) -> dict[str, float]:
        """Up to `limit` item ids with their cosine to `query`, best first."""
        if not self._live or limit <= 0 or query.shape[-1] != self._blocks[0][0].shape[1]:
            return {}
        scores = self._scores(np.asarray(query, dtype=np.float32).reshape(-1))
        scores[~self._alive] = -np.inf
        count = min(limit, self._live)
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best])]
        return {self._ids[at]: float(scores[at]) for at in best}

    def _scores(self, query: Vectors) -> Vectors:
        """Every row's cosine to `query`: the codes' products (`cosines`), scaled back, the
        main block's rows then the tail's."""
        found = [cosines(codes, query) * scale for codes, scale in self._blocks]
        scores: Vectors = found[0] if len(found) == 1 else np.concatenate(found)
        return scores


class VectorFile:
    """The vectors file of one user and one model. Blocking: call from a worker thread."""

    def __init__(self, path: Path, dimensions: int) -> None:
        self.path = path
        self.directory = path.parent
        self.dimensions = dimensions
        self._record = _record(dimensions)

    @classmethod
    def of(cls, user_directory: Path, model_id: str, dimensions: int) -> VectorFile:
        """The file of `model_id`'s vectors in a user's folder."""
        path = user_directory / "vectors" / f"{_slug(model_id)}.{dimensions}.f16"
        return cls(path, dimensions)

    @classmethod
    def every(cls, user_directory: Path) -> list[VectorFile]:
        """The vector files of every model in a user's folder."""
        folder = user_directory / "vectors"
        found = sorted(folder.glob("*.f16")) if folder.exists() else []
        return [cls(path, int(path.suffixes[-2].lstrip("."))) for path in found]

    def load(self, wanted: set[str]) -> tuple[list[str], npt.NDArray[np.float16]]:
        """Ids and vectors (float16, as the file keeps them) of the items in `wanted` (the
        last record of each id wins); a file holding just those is read without a copy.

        The file is rewritten with only those when it holds anything else: vectors of
        forgotten items, old versions, a record cut short by a crash.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return [], np.zeros((0, self.dimensions), dtype=np.float16)
        whole = len(raw) - len(raw) % self._record.itemsize
        records = np.frombuffer(raw, dtype=self._record, count=whole // self._record.itemsize)
        latest: dict[str, int] = {}
        for at, raw_id in enumerate(records["id"].tolist()):
            item_id = raw_id.decode("ascii", "replace")
            if item_id in wanted:
                latest[item_id] = at
        rows = list(latest.values())
        if len(rows) != len(records) or whole != len(raw):
            self._rewrite(records[rows])
        if rows == list(range(len(records))):
            return list(latest), records["vector"]
        return list(latest), records["vector"][rows]

    def append(self, item_ids: list[str], vectors: Vectors) -> None:
        """Add records durably in one write; ids too long for a record are left unsaved."""
        records = self._records(item_ids, vectors)
        if not len(records):
            return
        new = not self.path.exists()
        fd = open_private(self.path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            whole = size - size % self._record.itemsize
            if whole != size:  # a record cut short by a crash: drop it, keep the rest aligned
                os.ftruncate(fd, whole)
            os.pwrite(fd, records.tobytes(), whole)
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.directory)

    def remove(self, item_ids: set[str]) -> None:
        """Rewrite the file without these items' vectors (forgetting leaves nothing behind)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        whole = len(raw) - len(raw) % self._record.itemsize
        records = np.frombuffer(raw[:whole], dtype=self._record)
        unwanted = {item_id.encode() for item_id in item_ids}
        keep = np.array([raw_id not in unwanted for raw_id in records["id"].tolist()], dtype=bool)
        if not keep.all() or whole != len(raw):
            self._rewrite(records[keep])

    def _records(self, item_ids: list[str], vectors: Vectors) -> npt.NDArray[np.void]:
        fits = [at for at, item_id in enumerate(item_ids) if len(item_id.encode()) <= ID_BYTES]
        records = np.zeros(len(fits), dtype=self._record)
        records["id"] = [item_ids[at].encode() for at in fits]
        records["vector"] = vectors[fits]
        return records

    def _rewrite(self, records: npt.NDArray[np.void]) -> None:
        if len(records):
            write_atomic(self.path, records.tobytes())
        else:
            self.path.unlink(missing_ok=True)


def _slug(model_id: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)[:60]
    digest = hashlib.blake2b(model_id.encode(), digest_size=4).hexdigest()
    return f"{readable}-{digest}"
