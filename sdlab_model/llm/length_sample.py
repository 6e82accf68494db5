"""Measured request lengths: an empirical distribution of (prompt tokens, output tokens) pairs.

A ``LengthSample`` is what a CSV of measured requests gives (``parse_length_csv``): one row per
request, two whole numbers. Given to an ``LlmWorkload`` it replaces the lognormal of
``lengths``:

- the token-level simulator draws whole rows, with replacement (prompt and output together, so
  their correlation is kept);
- the analytic model takes each column's own distribution at the same quantile nodes as the
  lognormal (``NODE_WEIGHTS``), each node the mean of the sample over its slice of probability,
  so the mean is the sample's exactly and the spread within a few percent (the thin tail slices
  keep the p99). It treats the two columns as independent, as it does the lognormals: a sample
  whose long prompts come with long outputs is where the simulator check matters.

The workload's four length fields (means and cvs) become the sample's moments.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from sdlab_model.llm.lengths import NODE_EDGES, NODE_WEIGHTS, draw_lengths

MAX_SAMPLE_BYTES = 1_000_000
"""Largest CSV accepted (the server's upload limit, ``server.maxUploadSize``, is 1 MB too)."""
MAX_SAMPLE_ROWS = 20_000
"""Most requests in a sample: enough for a p99.9, and the server's caches keep up to 256
workloads (at 8 bytes a row, 256 samples of 20,000 rows hold 41 MB; of 100,000, 205 MB)."""
MAX_ROW_TOKENS = 1_048_576
"""Largest prompt or output in a row (a million tokens: past every catalog model's context)."""
CSV_HEADER = "prompt_tokens,output_tokens"


@dataclass(frozen=True, eq=False, repr=False)
class LengthSample:
    """Measured requests: ``prompt_tokens[i]`` and ``output_tokens[i]`` of request ``i``.

    Given as sequences of whole numbers, kept as read-only int32 arrays (20,000 rows take
    160 kB; as tuples of Python ints ~1.4 MB, and caches keep many workloads). Equal,
    and hashed, by content (``digest``)."""

    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    source: str = "uploaded CSV"

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "output_tokens"):
            object.__setattr__(self, name, _column(name, getattr(self, name)))
        rows = len(self.prompt_tokens)
        if rows != len(self.output_tokens) or not 1 <= rows <= MAX_SAMPLE_ROWS:
            raise ValueError(
                f"a length sample needs 1 to {MAX_SAMPLE_ROWS:,} rows of prompt and output "
                f"tokens alike, got {rows:,} and {len(self.output_tokens):,}"
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LengthSample) and self.digest == other.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"LengthSample({self.rows:,} rows from {self.source!r}, {self.digest[:12]})"

    @cached_property
    def digest(self) -> str:
        """A SHA-256 of the rows: the sample's identity, in caches and comparisons."""
        return hashlib.sha256(
            self.prompt_tokens.tobytes() + self.output_tokens.tobytes()
        ).hexdigest()

    @property
    def rows(self) -> int:
        return len(self.prompt_tokens)

    def column(self, name: str) -> np.ndarray:
        """``"prompt"`` or ``"output"`` tokens (read-only)."""
        return self.prompt_tokens if name == "prompt" else self.output_tokens

    def mean(self, name: str) -> float:
        return float(self.column(name).mean())

    def cv(self, name: str) -> float:
        """Coefficient of variation (population standard deviation over the mean)."""
        values = self.column(name).astype(float)
        return float(values.std() / values.mean())

    @cached_property
    def rank_correlation(self) -> float:
        """Spearman's rank correlation of prompt and output tokens (0 for a constant column):
        how far long prompts come with long outputs, which the analytic model leaves out."""
        ranks = [_ranks(self.column(name)) for name in ("prompt", "output")]
        if min(float(r.std()) for r in ranks) == 0.0:
            return 0.0
        return float(np.corrcoef(ranks[0], ranks[1])[0, 1])

    @property
    def longest_request_tokens(self) -> int:
        """The most tokens one request holds: its prompt and its output."""
        return int((self.prompt_tokens.astype(np.int64) + self.output_tokens).max())

    def nodes(self, name: str, cap: int) -> np.ndarray:
        """The column's lengths within ``[1, cap]`` at the quantile nodes (``NODE_WEIGHTS``):
        the sample's mean over each node's slice of probability. Kept with the sample (a
        heatmap's cells ask for a few caps)."""
        key = (name, cap)
        if key not in self._nodes_by_cap:
            self._nodes_by_cap[key] = _nodes(self.column(name), cap)
        return self._nodes_by_cap[key]

    @cached_property
    def _nodes_by_cap(self) -> dict[tuple[str, int], np.ndarray]:
        return {}

    def draw(self, rng: np.random.Generator, count: int, prompt_cap: int, output_cap: int):
        """``count`` requests drawn as whole rows, with replacement: (prompts, outputs), each
        kept within ``[1, cap]``."""
        rows = rng.integers(0, self.rows, count)
        prompt = np.clip(self.prompt_tokens[rows].astype(np.int64), 1, prompt_cap)
        return prompt, np.clip(self.output_tokens[rows].astype(np.int64), 1, output_cap)

    def with_outputs(self, tokens: int) -> LengthSample:
        """The same prompts, each with ``tokens`` output tokens (a prefill-only pool's)."""
        return replace(self, output_tokens=np.full(self.rows, tokens))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share theirs), as Spearman's coefficient takes them."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse]


def _column(name: str, values) -> np.ndarray:
    """``values`` as a read-only int32 array; ``ValueError`` unless whole numbers in range."""
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a sequence of whole numbers")
    if len(array) and not 1 <= array.min() <= array.max() <= MAX_ROW_TOKENS:
        raise ValueError(
            f"{name} must be within 1 to {MAX_ROW_TOKENS:,}, got {array.min():,} to {array.max():,}"
        )
    array = array.astype(np.int32)
    array.flags.writeable = False
    return array


def _nodes(column: np.ndarray, cap: int) -> np.ndarray:
    """Conditional means over the node slices of the empirical quantile function Q(u)."""
    values = np.sort(np.clip(column, 1, cap)).astype(float)
    count = len(values)
    below = np.concatenate([[0.0], np.cumsum(values)])

    def integral(u: np.ndarray) -> np.ndarray:  # ∫₀ᵘ Q(v) dv, Q a step of height 1/count each
        position = u * count
        whole = np.minimum(np.floor(position).astype(np.int64), count - 1)
        return (below[whole] + (position - whole) * values[whole]) / count

    means = (integral(NODE_EDGES[1:]) - integral(NODE_EDGES[:-1])) / NODE_WEIGHTS
    # Within the slice's own rows (the differences of sums lose digits in the thinnest slices).
    first = np.minimum(np.floor(NODE_EDGES[:-1] * count).astype(np.int64), count - 1)
    last = np.clip(np.ceil(NODE_EDGES[1:] * count).astype(np.int64) - 1, first, count - 1)
    return np.clip(means, values[first], values[last])


def parse_length_csv(data: bytes, *, source: str = "uploaded CSV") -> LengthSample:
    """A ``LengthSample`` from a CSV file's bytes: two whole numbers a row, prompt tokens then
    output tokens, with an optional header (``prompt_tokens,output_tokens`` or any words).

    At most 1 MB and 20,000 rows; UTF-8 text; every prompt and output at least 1 token. Raises
    only ``ValueError``, with a reason a person can act on (the row and what is wrong)."""
    if len(data) > MAX_SAMPLE_BYTES:
        raise ValueError(f"the file is over {MAX_SAMPLE_BYTES // 1000:,} kB")
    try:
        text = data.decode("utf-8-sig")  # as Excel saves "CSV UTF-8"
    except UnicodeDecodeError:
        raise ValueError("the file is not UTF-8 text") from None
    if "\x00" in text:
        raise ValueError("the file is not text (it holds NUL bytes)")
    try:
        rows = [
            (n, r) for n, r in enumerate(csv.reader(io.StringIO(text)), 1) if "".join(r).strip()
        ]
    except csv.Error as error:
        raise ValueError(f"not a CSV file ({error})") from None
    if rows and not _is_number(rows[0][1][0]):
        rows = rows[1:]  # a header
    if not rows:
        raise ValueError("the file has no rows of prompt and output tokens")
    if len(rows) > MAX_SAMPLE_ROWS:
        raise ValueError(f"the file has {len(rows):,} rows; at most {MAX_SAMPLE_ROWS:,}")
    prompts, outputs = [], []
    for number, row in rows:
        if len(row) != 2:
            raise ValueError(
                f"row {number} has {len(row)} cells; each row needs 2 (prompt tokens, "
                "output tokens)"
            )
        prompts.append(_tokens(row[0], number, "prompt_tokens"))
        outputs.append(_tokens(row[1], number, "output_tokens"))
    return LengthSample(np.array(prompts), np.array(outputs), source)


def lognormal_sample(
    prompt_tokens: tuple[float, float], output_tokens: tuple[float, float], rows: int, seed: int
) -> LengthSample:
    """``rows`` requests drawn from the lognormals of (mean, cv) ``prompt_tokens`` and
    ``output_tokens``, one seeded stream each: an example file, or a test's sample."""
    prompt_rng, output_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)
    )
    prompts = draw_lengths(prompt_rng, *prompt_tokens, rows, MAX_ROW_TOKENS)
    outputs = draw_lengths(output_rng, *output_tokens, rows, MAX_ROW_TOKENS)
    return LengthSample(prompts, outputs, "lognormal draw")


def length_csv(sample: LengthSample) -> str:
    """The inverse of ``parse_length_csv``, with the header."""
    rows = zip(sample.prompt_tokens.tolist(), sample.output_tokens.tolist(), strict=True)
    return "\n".join([CSV_HEADER, *(f"{p},{o}" for p, o in rows)]) + "\n"


def _is_number(text: str) -> bool:
    try:
        float(text.strip())
    except ValueError:
        return False
    return True


def _tokens(text: str, number: int, name: str) -> int:
    shown = text.strip()[:30]
    try:
        value = int(text.strip())
    except ValueError:
        kind = "a whole number" if _is_number(text) else "a number"
        raise ValueError(f"row {number}: {name} {shown!r} is not {kind}") from None
    if value < 0:
        raise ValueError(f"row {number}: {name} {value:,} is negative")
    if value == 0:
        what = "a request yields at least one token" if name == "output_tokens" else "at least 1"
        raise ValueError(f"row {number}: {name} is 0 ({what})")
    if value > MAX_ROW_TOKENS:
        raise ValueError(f"row {number}: {name} {shown} is over {MAX_ROW_TOKENS:,}")
    return value
