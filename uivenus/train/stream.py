"""Batches from sources, endlessly, in an order fixed by (seed, epoch), sharded over ranks, with a position that a
checkpoint saves and restores exactly (`SampleStream`).

Sources are mixed, not chained: each is shuffled on its own and every slot of an epoch draws its source at random,
so a source larger than the shuffle buffer does not keep the config's order. Without weights the draw follows the
sources' remaining sizes (each sample once per epoch); with mixture weights it follows the weights, and a source
that runs out starts a fresh shuffled pass (an epoch is then as many references as all sources hold).

The stream is where reproducibility lives: the order depends on nothing but the seed and the epoch, and a resumed
run skips references without building them, so a restart sees the same batches as an uninterrupted run.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from uivenus.train.collate import Batch, PaddingSide, collate
from uivenus.train.encode import Encoded, SampleTooLongError, encode
from uivenus.train.samples import DataError, SampleRef, Samples

__all__ = ["SampleStream"]


def _shuffled(refs: Iterator[SampleRef], rng: random.Random, buffer: int) -> Iterator[SampleRef]:
    """A streaming shuffle through a buffer of `buffer` references (0: keep the order)."""
    if buffer <= 1:
        yield from refs
        return
    pool: list[SampleRef] = []
    for ref in refs:
        if len(pool) < buffer:
            pool.append(ref)
            continue
        j = rng.randrange(buffer)
        yield pool[j]
        pool[j] = ref
    rng.shuffle(pool)
    yield from pool


def _mixed(streams: Sequence[Iterator[SampleRef]], weights: Sequence[float], total: int, rng: random.Random, *,
           exact: bool) -> Iterator[SampleRef]:
    """`total` references, each slot's stream drawn in proportion to its weight. `exact`: the weights are the
    streams' sizes and every draw uses one up, so each reference comes exactly once."""
    left = list(weights)
    for _ in range(total):
        (pick,) = rng.choices(range(len(streams)), weights=left)
        if exact:
            left[pick] -= 1
        yield next(streams[pick])


def _cycled(source: Samples, name: str, buffer: int) -> Iterator[SampleRef]:
    """A source's references without end, reshuffled on every pass (the source must not be empty)."""
    for cycle in itertools.count():
        yield from _shuffled(source.refs(), random.Random(f"{name}:{cycle}"), buffer)


class SampleStream:
    """Batches from sources, endlessly, epoch after epoch, in an order fixed by (seed, epoch).

    Per epoch each source's references are shuffled through a buffer and the sources mixed slot by slot (by
    `weights`, one positive number per source, if given; else by their sizes); reference i goes to rank
    i % world_size; each rank builds, encodes (skipping and counting samples over `max_length`) and pads its own
    batches. `state_dict()` is the position just after the last batch handed out, so a checkpoint taken between
    batches resumes the same sequence exactly, skipping references without building them.
    """

    def __init__(self, sources: Sequence[Samples], processor: Any, *, batch_size: int, max_length: int | None = None,
                 seed: int = 0, shuffle_buffer: int = 1024, padding_side: PaddingSide = "right",
                 weights: Sequence[float] | None = None) -> None:
        if not sources:
            raise DataError("a stream needs at least one source of samples")
        if weights is not None and (len(weights) != len(sources)
                                    or not all(math.isfinite(w) and w > 0 for w in weights)):
            raise DataError(f"mixture weights must be one positive number per source ({len(sources)}), got "
                            f"{list(weights)}; give every source a weight or none")
        if batch_size < 1:
            raise DataError(f"batch_size must be >= 1, got {batch_size}")
        self.sources, self.processor = tuple(sources), processor
        self.batch_size, self.max_length, self.seed = batch_size, max_length, seed
        self.shuffle_buffer, self.padding_side = shuffle_buffer, padding_side
        self.weights = None if weights is None else tuple(float(w) for w in weights)
        tokenizer = processor.tokenizer
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.rank, self.world_size = 0, 1
        self._epoch, self._position, self._too_long = 0, 0, 0
        self._counts: tuple[int, ...] | None = None

    def shard(self, rank: int, world_size: int) -> None:
        """Take only this rank's share (set once, before iterating)."""
        if not 0 <= rank < world_size:
            raise DataError(f"rank {rank} is not in 0..{world_size - 1}")
        self.rank, self.world_size = rank, world_size

    def source_counts(self) -> tuple[int, ...]:
        """References in each source (counted once; no sample is built)."""
        if self._counts is None:
            self._counts = tuple(source.count() for source in self.sources)
        return self._counts

    def samples_per_epoch(self) -> int:
        """References in one epoch over all ranks."""
        return sum(self.source_counts())

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self._epoch, "position": self._position, "too_long": self._too_long}

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        self._epoch, self._position = int(state["epoch"]), int(state["position"])
        self._too_long = int(state["too_long"])

    def epoch_refs(self, epoch: int) -> Iterator[SampleRef]:
        """Every rank's references of `epoch`, in order."""
        name, buffer, counts = f"uivenus-data:{self.seed}:{epoch}", self.shuffle_buffer, self.source_counts()
        if self.weights is not None:
            empty = [source.name for source, count in zip(self.sources, counts) if count == 0]
            if empty:
                raise DataError(f"sources {empty} have a mixture weight but no samples; fix their options or drop them")
            cycles = [_cycled(source, f"{name}:{i}", buffer) for i, source in enumerate(self.sources)]
            return _mixed(cycles, self.weights, sum(counts), random.Random(name), exact=False)
        if buffer <= 1:  # unshuffled (held-out data): the sources in config order, each in file order
            return itertools.chain.from_iterable(source.refs() for source in self.sources)
        streams = [_shuffled(source.refs(), random.Random(f"{name}:{i}"), buffer)
                   for i, source in enumerate(self.sources)]
        return _mixed(streams, counts, sum(counts), random.Random(name), exact=True)

    def __iter__(self) -> Iterator[Batch]:
        epoch, start = self._epoch, self._position
        pending: list[Encoded] = []
        while True:
            built = 0
            for index, ref in enumerate(self.epoch_refs(epoch)):
                if index < start or index % self.world_size != self.rank:
                    continue
                try:
                    pending.append(encode(self.processor, ref(), self.max_length))
                except SampleTooLongError:
                    self._too_long += 1
                    continue
                built += 1
                if len(pending) == self.batch_size:
                    self._epoch, self._position = epoch, index + 1
                    yield collate(pending, self.pad_id, self.padding_side)
                    pending = []
            if built == 0 and start == 0:
                raise DataError(f"epoch {epoch} gave rank {self.rank} no sample that fits max_length="
                                f"{self.max_length} ({self._too_long} too long so far); raise max_length or add data")
            epoch, start = epoch + 1, 0
