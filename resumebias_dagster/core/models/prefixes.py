"""Token prefixes that several prompts share, so that a model computes each one once.

Pure functions over token-id lists (no torch): the embedded LLM (``local_llm``) turns each
prefix into cached keys and values.
"""

from __future__ import annotations


def common_prefix(sequences: list[list[int]]) -> int:
    """Length of the longest token prefix every sequence shares."""
    first = sequences[0]
    length = min(len(s) for s in sequences)
    for seq in sequences[1:]:
        i = 0
        while i < length and seq[i] == first[i]:
            i += 1
        length = i
    return length


def prefix_groups(sequences: list[list[int]], minimum: int) -> list[tuple[list[int], int]]:
    """Indices of ``sequences`` grouped by a shared prefix, with its length.

    In token order a group's shared prefix is the least of its neighbours' common prefixes, so
    the grouping is a split of the sorted list into runs; the split kept saves the most tokens
    (a run of k sharing p tokens computes them once instead of k times: (k - 1) x p saved),
    counting only runs whose prefix is at least ``minimum``. Every member keeps at least one
    token after the prefix. Sequences in no group come last, as one group with prefix 0.
    """
    order = sorted(range(len(sequences)), key=lambda i: sequences[i])
    n = len(order)
    common = []
    for a, b in zip(order, order[1:]):
        x, y = sequences[a], sequences[b]
        limit = min(len(x), len(y)) - 1
        j = 0
        while j < limit and x[j] == y[j]:
            j += 1
        common.append(j)
    # saved[k]: the most tokens saved by the first k sorted sequences; cut[k]: where its last run starts.
    saved, cut = [0] * (n + 1), [0] * (n + 1)
    for k in range(1, n + 1):
        saved[k], cut[k] = saved[k - 1], k - 1
        shared = None
        for i in range(k - 2, -1, -1):  # the run order[i:k]
            shared = common[i] if shared is None else min(shared, common[i])
            if shared < minimum:
                break
            if saved[i] + (k - i - 1) * shared > saved[k]:
                saved[k], cut[k] = saved[i] + (k - i - 1) * shared, i
    groups: list[tuple[list[int], int]] = []
    loose: list[int] = []
    k = n
    while k > 0:
        i = cut[k]
        if k - i > 1:
            groups.append((order[i:k], min(common[i : k - 1])))
        else:
            loose.append(order[i])
        k = i
    groups.reverse()
    if loose:
        groups.append((sorted(loose), 0))
    return groups


def sharing_plan(sequences: list[list[int]], minimum: int) -> tuple[int, list[tuple[list[int], int]]]:
    """How ``next_token_probs`` shares work: the opening every sequence shares (0 when shorter than
    ``minimum`` or for a single sequence; each keeps at least one token after it), and the groups
    of the tails after it (``prefix_groups``), each with its own longer prefix."""
    shared = 0
    if len(sequences) > 1:
        shared = min(common_prefix(sequences), min(len(s) for s in sequences) - 1)
        if shared < minimum:
            shared = 0
    return shared, prefix_groups([s[shared:] for s in sequences], minimum)


def computed_spans(sequences: list[list[int]], minimum: int) -> list[tuple[int, int]]:
    """The position ranges ``[start, stop)`` a model computes under ``sharing_plan``: the opening
    once, each group's prefix once, each sequence's rest once. Their total length is the tokens
    actually computed; the positions say how many keys each one attends to."""
    if not sequences:
        return []
    shared, groups = sharing_plan(sequences, minimum)
    spans = [(0, shared)] if shared else []
    for rows, extra in groups:
        if extra:
            spans.append((shared, shared + extra))
        spans.extend((shared + extra, len(sequences[i])) for i in rows)
    return spans
