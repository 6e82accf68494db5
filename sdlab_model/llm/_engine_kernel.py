"""The token-level simulator's compiled loop: one engine replica, iteration by iteration.

Imported lazily by ``sdlab_model.llm.simulator`` so that ``import sdlab_model`` neither imports
numba nor compiles anything. ``_serve`` is plain Python; ``serve`` is the same function compiled.

The scheduler is vLLM's (v1 ``Scheduler.schedule``, vllm-project/vllm, read 2026-12-02), reduced
to what decides latency:

- Each iteration has a budget of ``token_budget`` tokens (``max_num_batched_tokens``). Running
  sequences are served first, in admission order: a decoding one takes 1 token, one still in
  prefill takes the rest of its prompt or what is left of the budget (chunked prefill).
- A sequence needs KV blocks for every token it has computed. When there are not enough free
  blocks for the tokens scheduled, the most recently admitted running sequence is preempted:
  its blocks are freed and it goes to the front of the waiting queue, to recompute its prompt
  and the tokens it had generated as one longer prefill (vLLM's recompute preemption).
- When no running sequence was preempted this iteration, waiting sequences are admitted in
  order (preempted ones first, then arrivals, first come first served) while budget, the
  ``max_running`` cap and free blocks for their first chunk allow.
- The iteration's time is the roofline of ``sdlab_model.llm.iteration`` on the tokens, attention
  pairs and KV tokens scheduled (``cost`` holds its seven coefficients in ``as_tuple`` order).
- A prompt's first ``cached`` tokens come from a prefix cache (vLLM's automatic prefix
  caching): admitted, the sequence holds KV blocks for them but computes from there on, and a
  recompute after preemption finds them cached again.
- A sequence emits a token at the end of the iteration that completes its prefill (its first
  token, unless it is a recompute) and at the end of each decode iteration; it leaves when it
  has emitted ``output`` tokens.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def compile_kernel(function):
    """``njit(cache=True, nogil=True)``, or without the cache where no cache dir is writable
    (the pattern of ``sdlab_model/simulation/_sim_kernel.py``)."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _iteration_ms(cost: np.ndarray, tokens: float, pairs: float, kv_tokens: float) -> float:
    compute = cost[0] * tokens + cost[1] * pairs
    memory = cost[2] + cost[3] * kv_tokens
    return cost[6] + max(compute, memory) + cost[4] + cost[5] * tokens


iteration_ms = compile_kernel(_iteration_ms)


def _serve(
    arrival_ms: np.ndarray,
    prompt: np.ndarray,
    output: np.ndarray,
    cached: np.ndarray,
    max_running: int,
    token_budget: int,
    total_blocks: int,
    block_tokens: int,
    cost: np.ndarray,
    first_token_ms: np.ndarray,
    finish_ms: np.ndarray,
    preempted: np.ndarray,
) -> np.ndarray:
    """Serve the requests (sorted by arrival); fill the per-request arrays.

    Returns ``[iterations, preemptions, requests finished, deadlocked (0/1)]`` as int64, then
    the summed iteration time and the summed batch sizes (as floats cast to int64 microseconds
    and tokens). A deadlock is a request whose prompt and output cannot fit the whole cache.
    """
    count = arrival_ms.shape[0]
    computed = cached.astype(np.int64).copy()
    target = prompt.astype(np.int64).copy()
    generated = np.zeros(count, dtype=np.int64)
    blocks = np.zeros(count, dtype=np.int64)
    running = np.empty(max_running, dtype=np.int64)
    chunk = np.zeros(max_running, dtype=np.int64)
    stack = np.empty(count, dtype=np.int64)
    stack_size = 0
    running_size = 0
    head = 0
    arrived = 0
    free_blocks = total_blocks
    finished = 0
    iterations = 0
    preemptions = 0
    deadlocked = 0
    busy_ms = 0.0
    batched_tokens = 0
    now = 0.0
    while finished < count:
        if running_size == 0 and stack_size == 0 and head == arrived:
            now = max(now, arrival_ms[head])
        while arrived < count and arrival_ms[arrived] <= now:
            arrived += 1
        budget = token_budget
        any_preempted = False
        index = 0
        while index < running_size:
            request = running[index]
            remaining = target[request] - computed[request]
            tokens = min(remaining, budget) if remaining > 0 else min(1, budget)
            chunk[index] = 0
            if tokens <= 0:
                index += 1
                continue
            needed = (computed[request] + tokens + block_tokens - 1) // block_tokens
            needed -= blocks[request]
            while needed > free_blocks:
                victim = running[running_size - 1]
                running_size -= 1
                free_blocks += blocks[victim]
                blocks[victim] = 0
                computed[victim] = cached[victim]
                target[victim] = prompt[victim] + generated[victim]
                preempted[victim] += 1
                preemptions += 1
                any_preempted = True
                stack[stack_size] = victim
                stack_size += 1
                if victim == request:
                    break
            if index >= running_size:
                break
            free_blocks -= max(needed, 0)
            blocks[request] += max(needed, 0)
            chunk[index] = tokens
            budget -= tokens
            index += 1
        while not any_preempted and budget > 0 and running_size < max_running:
            if stack_size > 0:
                request = stack[stack_size - 1]
            elif head < arrived:
                request = head
            else:
                break
            tokens = min(target[request] - computed[request], budget)
            needed = (computed[request] + tokens + block_tokens - 1) // block_tokens
            if needed > free_blocks:
                if running_size == 0 and needed > total_blocks:
                    deadlocked = 1
                break
            if stack_size > 0:
                stack_size -= 1
            else:
                head += 1
            free_blocks -= needed
            blocks[request] = needed
            running[running_size] = request
            chunk[running_size] = tokens
            running_size += 1
            budget -= tokens
        if deadlocked == 1:
            break
        scheduled = 0
        pairs = 0.0
        kv_tokens = 0.0
        for index in range(running_size):
            tokens = chunk[index]
            if tokens > 0:
                start = computed[running[index]]
                scheduled += tokens
                pairs += tokens * start + tokens * (tokens + 1) / 2.0
                kv_tokens += start + tokens
        if scheduled == 0:
            if running_size == 0 and head >= count and stack_size == 0:
                break
            if running_size > 0 or stack_size > 0:
                deadlocked = 1
                break
            continue
        step = iteration_ms(cost, scheduled, pairs, kv_tokens)
        now += step
        busy_ms += step
        batched_tokens += scheduled
        iterations += 1
        kept = 0
        for index in range(running_size):
            request = running[index]
            tokens = chunk[index]
            if tokens > 0:
                computed[request] += tokens
                if computed[request] >= target[request]:
                    generated[request] += 1
                    if first_token_ms[request] < 0.0:
                        first_token_ms[request] = now
            if generated[request] >= output[request]:
                finish_ms[request] = now
                free_blocks += blocks[request]
                blocks[request] = 0
                finished += 1
            else:
                running[kept] = request
                kept += 1
        running_size = kept
    counters = np.zeros(6, dtype=np.int64)
    counters[0] = iterations
    counters[1] = preemptions
    counters[2] = finished
    counters[3] = deadlocked
    counters[4] = np.int64(busy_ms * 1000.0)
    counters[5] = batched_tokens
    return counters


serve = compile_kernel(_serve)
